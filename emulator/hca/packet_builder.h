// Builds the headers of the packets an HCA sends, byte for byte as IBA lays them out.
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"

namespace ibemu::hca {

struct RcSegment {
  uint16_t slid = 0, dlid = 0;
  uint8_t sl = 0, vl = 0;
  uint16_t pkey = 0xFFFF;
  uint32_t dest_qp = 0;
  uint32_t psn = 0;
  uint32_t payload = 0;
  bool first = true, last = true;  // position of the segment in its message
  bool ack_req = false;            // AckReq on a segment that is not the last
  bool uc = false;                 // a UC SEND: never AckReq
};

// RC SEND First/Middle/Last/Only; AckReq is set on the last segment of a message (and on others
// with ack_req). With `uc`, the UC SEND of the same position, without AckReq.
void BuildRcSend(engine::Packet* p, const RcSegment& s);
// RC ACKNOWLEDGE with an AETH carrying syndrome ACK and the message sequence number.
void BuildRcAck(engine::Packet* p, uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t vl,
                uint32_t dest_qp, uint32_t psn, uint32_t msn);

// A congestion notification packet (IBA annex A10): LRH and BTH with opcode CNP and BECN set,
// to the QP whose packet arrived with FECN; no payload.
void BuildCnp(engine::Packet* p, uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t vl,
              uint32_t dest_qp);

}  // namespace ibemu::hca
