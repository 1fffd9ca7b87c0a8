// Link-level flow-control packet (IBA vol. 1, 7.9.4): 6 bytes on the wire, one per VL update.
//   byte 0: Op(4) | FCTBS[11:8]   byte 1: FCTBS[7:0]
//   byte 2: VL(4) | FCCL[11:8]    byte 3: FCCL[7:0]      bytes 4-5: LPCRC
#pragma once
#include <array>
#include <cstdint>

#include "common/wire/crc.h"

namespace ibemu::wire {

constexpr int kFlowControlPacketBytes = 6;
// Credits are 64-byte blocks; FCTBS and FCCL are 12-bit counters that wrap (IBA 7.9.4.2).
constexpr int kCreditBlockBytes = 64;
// The blocks a packet of `wire_bytes` (LRH through VCRC) takes in a receive buffer (IBA 7.9.4.1).
constexpr uint32_t CreditBlocks(uint32_t wire_bytes) {
  return (wire_bytes + kCreditBlockBytes - 1) / kCreditBlockBytes;
}
constexpr uint16_t kFcCounterMask = 0xFFF;

enum class FcOp : uint8_t { kNormal = 0, kInit = 1 };

struct FlowControlPacket {
  FcOp op = FcOp::kNormal;
  uint8_t vl = 0;
  uint16_t fctbs = 0;  // total blocks sent on this VL, modulo 4096
  uint16_t fccl = 0;   // credit limit granted to the peer, modulo 4096

  std::array<uint8_t, kFlowControlPacketBytes> Encode() const {
    std::array<uint8_t, kFlowControlPacketBytes> b{};
    b[0] = static_cast<uint8_t>(static_cast<uint8_t>(op) << 4 | ((fctbs >> 8) & 0xF));
    b[1] = static_cast<uint8_t>(fctbs);
    b[2] = static_cast<uint8_t>((vl & 0xF) << 4 | ((fccl >> 8) & 0xF));
    b[3] = static_cast<uint8_t>(fccl);
    uint16_t crc = crc16_ib(b.data(), 4);
    b[4] = static_cast<uint8_t>(crc >> 8);
    b[5] = static_cast<uint8_t>(crc);
    return b;
  }

  // Returns false when the LPCRC does not match: the receiver drops such a packet (IBA 7.9.4.3).
  static bool Decode(const uint8_t* b, FlowControlPacket* out) {
    uint16_t crc = crc16_ib(b, 4);
    if (b[4] != static_cast<uint8_t>(crc >> 8) || b[5] != static_cast<uint8_t>(crc)) return false;
    out->op = static_cast<FcOp>(b[0] >> 4);
    out->fctbs = static_cast<uint16_t>((b[0] & 0xF) << 8 | b[1]);
    out->vl = b[2] >> 4;
    out->fccl = static_cast<uint16_t>((b[2] & 0xF) << 8 | b[3]);
    return true;
  }
};

}  // namespace ibemu::wire
