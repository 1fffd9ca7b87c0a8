// A management datagram on the wire: LRH, BTH (UD SEND Only), DETH, the 256-byte MAD, ICRC,
// VCRC (IBA 13.5). SMPs go to QP0 on VL15; GS MADs (PerfMgt, CC, SA) to QP1 on a data VL with
// Q_Key 0x80010000.
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"

namespace ibemu::mgmt {

struct MadAddress {
  uint16_t slid = 0, dlid = 0;
  uint8_t sl = 0, vl = 0;
  uint32_t src_qp = 0, dest_qp = 0;
  uint32_t qkey = 0;
  uint16_t pkey = 0xFFFF;
};

constexpr int kMadHeaderBytes = 8 + 12 + 8;  // LRH, BTH, DETH

// Fills `p` (headers; the MAD bytes go in p->mad, allocated here if absent).
void BuildMadPacket(engine::Packet* p, const MadAddress& a);
// Reads the addressing back from a received management packet; false if it is not one (wrong
// opcode, no MAD bytes, a header of the wrong length).
bool ParseMadPacket(engine::Packet& p, MadAddress* a);

}  // namespace ibemu::mgmt
