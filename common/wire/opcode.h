// BTH OpCode values (IBA vol. 1, 9.2.1, table 38) and what each packet carries: its transport,
// operation, place in a message, and which extension headers follow the BTH (9.3).
#pragma once
#include <cstdint>

namespace ibemu::wire::opcode {

// The transport is the top three bits; the operation the low five.
constexpr uint8_t kRc = 0x00;
constexpr uint8_t kUc = 0x20;
constexpr uint8_t kRd = 0x40;
constexpr uint8_t kUd = 0x60;

// Operations (low five bits), the same under every transport that has them.
constexpr uint8_t kSendFirst = 0x00;
constexpr uint8_t kSendMiddle = 0x01;
constexpr uint8_t kSendLast = 0x02;
constexpr uint8_t kSendLastImm = 0x03;
constexpr uint8_t kSendOnly = 0x04;
constexpr uint8_t kSendOnlyImm = 0x05;
constexpr uint8_t kWriteFirst = 0x06;
constexpr uint8_t kWriteMiddle = 0x07;
constexpr uint8_t kWriteLast = 0x08;
constexpr uint8_t kWriteLastImm = 0x09;
constexpr uint8_t kWriteOnly = 0x0A;
constexpr uint8_t kWriteOnlyImm = 0x0B;
constexpr uint8_t kReadRequest = 0x0C;
constexpr uint8_t kReadResponseFirst = 0x0D;
constexpr uint8_t kReadResponseMiddle = 0x0E;
constexpr uint8_t kReadResponseLast = 0x0F;
constexpr uint8_t kReadResponseOnly = 0x10;
constexpr uint8_t kAcknowledge = 0x11;
constexpr uint8_t kAtomicAcknowledge = 0x12;
constexpr uint8_t kCompareSwap = 0x13;
constexpr uint8_t kFetchAdd = 0x14;
constexpr uint8_t kSendLastInvalidate = 0x16;
constexpr uint8_t kSendOnlyInvalidate = 0x17;

// Reliable Connection (transport prefix 000).
constexpr uint8_t kRcSendFirst = kRc | kSendFirst;
constexpr uint8_t kRcSendMiddle = kRc | kSendMiddle;
constexpr uint8_t kRcSendLast = kRc | kSendLast;
constexpr uint8_t kRcSendOnly = kRc | kSendOnly;
constexpr uint8_t kRcRdmaWriteFirst = kRc | kWriteFirst;
constexpr uint8_t kRcRdmaWriteMiddle = kRc | kWriteMiddle;
constexpr uint8_t kRcRdmaWriteLast = kRc | kWriteLast;
constexpr uint8_t kRcRdmaWriteOnly = kRc | kWriteOnly;
constexpr uint8_t kRcAcknowledge = kRc | kAcknowledge;
// Unreliable Datagram (prefix 011): SEND only, one packet per message.
constexpr uint8_t kUdSendOnly = kUd | kSendOnly;
constexpr uint8_t kUdSendOnlyImm = kUd | kSendOnlyImm;
// A SEND First/Middle/Last/Only (with or without immediate) of RC or UC: the packets
// synthetic sources send.
constexpr bool IsRcOrUcSend(uint8_t op) {
  return ((op & 0xE0) == kRc || (op & 0xE0) == kUc) && (op & 0x1F) <= kSendOnly;
}
// Congestion Notification Packet (IBA annex A10: prefix 100, "CNP").
constexpr uint8_t kCnp = 0x80;

// Extension headers that follow the BTH, in bytes (9.3).
constexpr int kDethBytes = 8;
constexpr int kRethBytes = 16;
constexpr int kAtomicEthBytes = 28;
constexpr int kAethBytes = 4;
constexpr int kAtomicAckEthBytes = 8;
constexpr int kImmDtBytes = 4;
constexpr int kIethBytes = 4;

enum class Transport : uint8_t { kRc, kUc, kRd, kUd, kCnp, kInvalid };
enum class Position : uint8_t { kFirst, kMiddle, kLast, kOnly };

// What an opcode means. Extension headers come in the order of the fields (9.3): DETH, RETH,
// AtomicETH, AETH, AtomicAckETH, ImmDt, IETH.
struct Info {
  Transport transport = Transport::kInvalid;
  uint8_t operation = 0;  // the low five bits
  Position position = Position::kOnly;
  bool deth = false, reth = false, atomic_eth = false, aeth = false, atomic_ack_eth = false;
  bool immdt = false, ieth = false;
  bool payload = false;  // carries data (SEND, WRITE, READ response)
  bool valid() const { return transport != Transport::kInvalid; }
  // Bytes of extension headers after the BTH.
  int ext_bytes() const {
    return (deth ? kDethBytes : 0) + (reth ? kRethBytes : 0) + (atomic_eth ? kAtomicEthBytes : 0) +
           (aeth ? kAethBytes : 0) + (atomic_ack_eth ? kAtomicAckEthBytes : 0) +
           (immdt ? kImmDtBytes : 0) + (ieth ? kIethBytes : 0);
  }
};

// The table: invalid for reserved values and for operations a transport does not have (UC has
// no READ or atomics, UD only SEND Only with and without immediate).
Info Describe(uint8_t opcode);

}  // namespace ibemu::wire::opcode
