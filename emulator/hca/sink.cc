// The sink (docs/blocks/hca_receive.md): packets that arrive, delivered and measured, the
// acknowledgements and CNPs they call for, and responses handed to the CC mechanism.

#include "common/wire/opcode.h"
#include "emulator/hca/hca.h"
#include "emulator/hca/packet_builder.h"

namespace ibemu::hca {

void Hca::OnPacket(int p, Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  if (pkt->mad && (lrh.vl() == policy::kVl15 || pkt->bth().dest_qp() <= 1)) {
    // QP0 and QP1: the node's agents (SMA, PMA) or the program attached to the port.
    if (lrh.vl() != policy::kVl15) Release(p, lrh.vl(), pkt->credit_class, pkt->blocks());
    QueueForAgents(p, pkt);
    return;
  }
  if (lrh.vl() == policy::kVl15 || !port_mgmt_[p].OwnsLid(lrh.dlid()) || ports_[p].port_state < 3) {
    // Misrouted packets, and data on a port that may not receive it yet, are counted and dropped.
    ++ports_[p].stats.dropped_no_route;
    Release(p, lrh.vl(), pkt->credit_class, pkt->blocks());
    FreePacket(pkt);
    return;
  }
  uint8_t op = pkt->bth().opcode();
  if (op == wire::opcode::kCnp) {
    // A CNP carries nothing for the host: congestion control takes it at once.
    Release(p, lrh.vl(), pkt->credit_class, pkt->blocks());
    OnResponse(pkt);
    FreePacket(pkt);
    return;
  }
  // Data packets: synthetic RC and UC SENDs, and verbs SENDs and WRITEs (the check only with CC
  // on, so the path without CC pays nothing for it).
  if (cc_hooks_ && (wire::opcode::IsRcOrUcSend(op) ||
                    (pkt->bth().dest_qp() >= kVerbsQpnBase && pkt->payload_len > 0 &&
                     (op & 0x1F) <= wire::opcode::kWriteOnlyImm))) {
    // H3 at the head's arrival: a CNP goes out at once, ahead of other traffic; BECN on the
    // acknowledgement waits for the ACK.
    cc::Echo echo = cc_hooks_->OnReceive(*this, p, *pkt);
    if (echo == cc::Echo::kCnp) SendCnp(p, *pkt);
    pkt->cc_echo = static_cast<uint8_t>(echo);
  }
  SimTime done = pkt->tail_arrival;
  if (pkt->payload_len > 0) {
    // The host takes packets in arrival order at its own rate; until it has, they hold credits.
    done = std::max(pkt->tail_arrival, sink_free_at_) + cfg_.host_rx.Time(pkt->payload_len);
    sink_free_at_ = done;
  }
  Post(id(), done, kSinkDone, static_cast<uint16_t>(p), 0, 0, pkt);
}

void Hca::Deliver(int p, Packet* pkt) {
  Release(p, pkt->lrh().vl(), pkt->credit_class, pkt->blocks());
  wire::Bth bth = pkt->bth();
  uint8_t op = bth.opcode();
  if (bth.dest_qp() >= kVerbsQpnBase) {
    VerbsReceive(p, pkt);
    return;
  }
  if (op == wire::opcode::kRcAcknowledge) {
    OnResponse(pkt);
    FreePacket(pkt);
    return;
  }
  if (wire::opcode::IsRcOrUcSend(op) && pkt->flow != engine::kNoFlow) {
    flows_->flows[pkt->flow].Delivered(now(), pkt->payload_len, now() - pkt->created, bth.fecn());
  }
  if (bth.ack_req()) {
    wire::Lrh lrh = pkt->lrh();
    Packet* ack = NewPacket();
    uint8_t sl = PathSl(p, lrh.slid(), lrh.sl());
    uint32_t& msn = Msn(lrh.slid(), bth.dest_qp());
    BuildRcAck(ack, lid(p), lrh.slid(), sl, sl2vl_[p][sl], bth.dest_qp(), bth.psn(), ++msn);
    if (pkt->cc_echo == static_cast<uint8_t>(cc::Echo::kOnAck)) ack->bth().set_becn(true);
    if (cc_hooks_) cc_hooks_->OnAck(*this, *pkt, *ack);
    QueueControl(p, ack, lrh.slid());
  }
  // The last packet of a message ends it for a replayed rank waiting here (after its ACK is
  // queued, so the answer a rank sends next goes out behind it).
  if (!trace_sources_.empty() && wire::opcode::IsRcOrUcSend(op) && pkt->flow != engine::kNoFlow &&
      (op & 0x1F) >= wire::opcode::kSendLast)
    TraceArrived(pkt->flow, pkt->lrh().slid());
  FreePacket(pkt);
}

uint32_t& Hca::Msn(uint16_t slid, uint32_t qp) {
  bool added;
  return msn_.Get(uint64_t{slid} << 32 | qp, &added);
}

void Hca::SendCnp(int p, Packet& m) {
  wire::Lrh lrh = m.lrh();
  uint8_t sl = PathSl(p, lrh.slid(), lrh.sl());
  Packet* cnp = NewPacket();
  // A verbs QP's CNP goes to the QP that sent (the connected QP); synthetic QPs share numbers.
  uint32_t qpn = m.bth().dest_qp();
  if (VerbsQp* q = VerbsQpOf(qpn)) qpn = q->attr.dest_qpn;
  BuildCnp(cnp, lid(p), lrh.slid(), sl, sl2vl_[p][sl], qpn);
  QueueControl(p, cnp, lrh.slid());
}

void Hca::OnResponse(Packet* pkt) {
  // This HCA numbers its QPs from 0x100 in creation order (QpFor), its verbs QPs from
  // kVerbsQpnBase by the same index, and responses name the QP.
  uint32_t qpn = pkt->bth().dest_qp();
  uint32_t qi = qpn >= kVerbsQpnBase ? qpn - kVerbsQpnBase : qpn - 0x100;
  if (!cc_hooks_ || qpn < 0x100 || qi >= qps_.size()) return;
  cc_hooks_->OnResponse(*this, qi, *pkt);
}

}  // namespace ibemu::hca
