// BTH OpCode values (IBA vol. 1, table 38) for the transports the emulator generates.
#pragma once
#include <cstdint>

namespace ibemu::wire::opcode {

// Reliable Connection (transport prefix 000).
constexpr uint8_t kRcSendFirst = 0x00;
constexpr uint8_t kRcSendMiddle = 0x01;
constexpr uint8_t kRcSendLast = 0x02;
constexpr uint8_t kRcSendOnly = 0x04;
constexpr uint8_t kRcRdmaWriteFirst = 0x06;
constexpr uint8_t kRcRdmaWriteMiddle = 0x07;
constexpr uint8_t kRcRdmaWriteLast = 0x08;
constexpr uint8_t kRcRdmaWriteOnly = 0x0A;
constexpr uint8_t kRcAcknowledge = 0x11;
// Unreliable Datagram (prefix 011): SEND only, one packet per message.
constexpr uint8_t kUdSendOnly = 0x64;
// Congestion Notification Packet (IBA annex A10: prefix 100, "CNP").
constexpr uint8_t kCnp = 0x80;

// Extension headers that follow the BTH, in bytes.
constexpr int kAethBytes = 4;
constexpr int kDethBytes = 8;
constexpr int kRethBytes = 16;

}  // namespace ibemu::wire::opcode
