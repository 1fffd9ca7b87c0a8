#include "emulator/mgmt/mad_packet.h"

#include "common/wire/opcode.h"

namespace ibemu::mgmt {

void BuildMadPacket(engine::Packet* p, const MadAddress& a) {
  p->hdr.fill(0);
  wire::Lrh lrh = p->lrh();
  lrh.set_vl(a.vl);
  lrh.set_sl(a.sl);
  lrh.set_lnh(wire::Lnh::kIbaLocal);
  lrh.set_dlid(a.dlid);
  lrh.set_slid(a.slid);
  wire::Bth bth = p->bth();
  bth.set_opcode(wire::opcode::kUdSendOnly);
  bth.set_pkey(a.pkey);
  bth.set_dest_qp(a.dest_qp);
  uint8_t* deth = p->hdr.data() + wire::kLrhBytes + wire::kBthBytes;
  for (int i = 0; i < 4; ++i) deth[i] = static_cast<uint8_t>(a.qkey >> (24 - 8 * i));
  for (int i = 0; i < 3; ++i) deth[5 + i] = static_cast<uint8_t>(a.src_qp >> (16 - 8 * i));
  p->hdr_len = kMadHeaderBytes;
  p->payload_len = engine::kMadBytes;
  if (!p->mad) p->mad = std::make_unique<engine::MadBytes>();
  lrh.set_pkt_len(p->pkt_len_words());
}

bool ParseMadPacket(engine::Packet& p, MadAddress* a) {
  // A MAD is exactly 256 bytes (IBA 13.4.2); anything else is malformed and dropped.
  if (!p.mad || p.hdr_len != kMadHeaderBytes || p.payload_len != engine::kMadBytes) return false;
  wire::Bth bth = p.bth();
  if (bth.opcode() != wire::opcode::kUdSendOnly) return false;
  wire::Lrh lrh = p.lrh();
  a->slid = lrh.slid();
  a->dlid = lrh.dlid();
  a->sl = lrh.sl();
  a->vl = lrh.vl();
  a->dest_qp = bth.dest_qp();
  a->pkey = bth.pkey();
  const uint8_t* deth = p.hdr.data() + wire::kLrhBytes + p.grh_bytes() + wire::kBthBytes;
  a->qkey = uint32_t{deth[0]} << 24 | uint32_t{deth[1]} << 16 | uint32_t{deth[2]} << 8 | deth[3];
  a->src_qp = uint32_t{deth[5]} << 16 | uint32_t{deth[6]} << 8 | deth[7];
  return true;
}

}  // namespace ibemu::mgmt
