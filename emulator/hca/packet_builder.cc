#include "emulator/hca/packet_builder.h"

#include "common/wire/opcode.h"

namespace ibemu::hca {
namespace {

void BuildLrhBth(engine::Packet* p, uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t vl,
                 uint8_t opcode, uint16_t pkey, uint32_t dest_qp, uint32_t psn, bool ack_req) {
  p->hdr.fill(0);
  wire::Lrh lrh = p->lrh();
  lrh.set_vl(vl);
  lrh.set_lver(0);
  lrh.set_sl(sl);
  lrh.set_lnh(wire::Lnh::kIbaLocal);
  lrh.set_dlid(dlid);
  lrh.set_slid(slid);
  wire::Bth bth = p->bth();
  bth.set_opcode(opcode);
  bth.set_tver(0);
  bth.set_pkey(pkey);
  bth.set_dest_qp(dest_qp);
  bth.set_ack_req(ack_req);
  bth.set_psn(psn & 0xFFFFFF);
}

}  // namespace

void BuildRcSend(engine::Packet* p, const RcSegment& s) {
  uint8_t op = s.first ? (s.last ? wire::opcode::kRcSendOnly : wire::opcode::kRcSendFirst)
                       : (s.last ? wire::opcode::kRcSendLast : wire::opcode::kRcSendMiddle);
  if (s.uc) op = static_cast<uint8_t>(wire::opcode::kUc | op);
  BuildLrhBth(p, s.slid, s.dlid, s.sl, s.vl, op, s.pkey, s.dest_qp, s.psn,
              !s.uc && (s.last || s.ack_req));
  p->hdr_len = wire::kLrhBytes + wire::kBthBytes;
  p->payload_len = s.payload;
  p->bth().set_pad_cnt(static_cast<uint8_t>(p->pad()));
  p->lrh().set_pkt_len(p->pkt_len_words());
}

void BuildRcAck(engine::Packet* p, uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t vl,
                uint32_t dest_qp, uint32_t psn, uint32_t msn) {
  BuildLrhBth(p, slid, dlid, sl, vl, wire::opcode::kRcAcknowledge, 0xFFFF, dest_qp, psn, false);
  uint8_t* aeth = p->hdr.data() + wire::kLrhBytes + wire::kBthBytes;
  aeth[0] = 0x1F;  // syndrome: ACK with the "invalid credit count" code (no end-to-end credits)
  aeth[1] = static_cast<uint8_t>(msn >> 16);
  aeth[2] = static_cast<uint8_t>(msn >> 8);
  aeth[3] = static_cast<uint8_t>(msn);
  p->hdr_len = wire::kLrhBytes + wire::kBthBytes + wire::opcode::kAethBytes;
  p->payload_len = 0;
  p->lrh().set_pkt_len(p->pkt_len_words());
}

void BuildCnp(engine::Packet* p, uint16_t slid, uint16_t dlid, uint8_t sl, uint8_t vl,
              uint32_t dest_qp) {
  BuildLrhBth(p, slid, dlid, sl, vl, wire::opcode::kCnp, 0xFFFF, dest_qp, 0, false);
  p->bth().set_becn(true);
  p->hdr_len = wire::kLrhBytes + wire::kBthBytes;
  p->payload_len = 0;
  p->lrh().set_pkt_len(p->pkt_len_words());
}

}  // namespace ibemu::hca
