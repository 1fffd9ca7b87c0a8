// What the window-based sources (Santos, MVCM) count of RC traffic: the request packets that ask
// for an ACK, and which of them an ACK acknowledges.
#pragma once
#include <cstdint>

#include "common/wire/bth.h"
#include "common/wire/extension_headers.h"
#include "common/wire/opcode.h"
#include "emulator/engine/packet.h"

namespace ibemu::cc {

// RC SEND and RDMA WRITE requests that ask for an ACK: the packets a window counts.
inline bool CountedInWindow(const engine::Packet& p) {
  wire::Bth bth = const_cast<engine::Packet&>(p).bth();
  return bth.opcode() <= wire::opcode::kWriteOnlyImm && bth.ack_req();
}

// An RC acknowledgement that is an ACK (AETH syndrome 0b00xxxxx), not an RNR NAK or a NAK: only
// an ACK acknowledges, and only its marks are the echo of a delivered packet.
inline bool IsAck(engine::Packet& p) {
  wire::Bth bth = p.bth();
  if ((bth.opcode() & 0x1F) != wire::opcode::kRcAcknowledge) return false;
  const uint8_t* aeth = p.hdr.data() + wire::kLrhBytes + p.grh_bytes() + wire::kBthBytes;
  return (aeth[0] & 0x60) == wire::aeth::kAck;
}

// PSNs are 24 bits and wrap: an ACK of PSN a acknowledges b when b is not after a.
inline bool PsnCovers(uint32_t a, uint32_t b) {
  return ((a - b) & 0xFFFFFF) < 0x800000;
}

}  // namespace ibemu::cc
