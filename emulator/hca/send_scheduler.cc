// The send scheduler (docs/blocks/hca_send.md): per port, VL arbitration over the QPs with
// something to send, the throttle gates per QP and per (port, SL) with parked QPs waiting for
// theirs, and each data packet built and sent.

#include <algorithm>

#include "common/wire/opcode.h"
#include "emulator/hca/hca.h"
#include "emulator/hca/packet_builder.h"

namespace ibemu::hca {

uint32_t Hca::NextSegment(const QueuePair& qp) const {
  return std::min(cfg_.mtu, qp.messages.front().bytes - qp.sent_in_msg);
}

bool Hca::QpReady(const QueuePair& qp, int p, int vl) const {
  if (qp.verbs) return VerbsReady(qp, p, vl);
  if (qp.messages.empty() || AllowedAt(qp) > now() || !port_active(p)) return false;
  if (ctx_->WireLid(qp.dlid) == 0) return false;  // the SM has not given the destination a LID
  uint32_t payload = NextSegment(qp);
  uint32_t wire = wire::kLrhBytes + wire::kBthBytes + payload + (4 - payload % 4) % 4 +
                  engine::kIcrcBytes + engine::kVcrcBytes;
  uint32_t blocks = wire::CreditBlocks(wire);
  const link::Port& pt = ports_[p];
  int cls = ctx_->CreditClassTo(ports_[p].link.peer_lp, qp.dlid);
  return pt.tx[pt.Slot(vl, cls)].Fits(blocks);
}

void Hca::Arbitrate(int p) {
  link::Port& pt = ports_[p];
  if (!link_up(p)) return;
  if (pt.tx_free_at > now()) {
    WakeAt(p, pt.tx_free_at);
    return;
  }
  if (SendPendingFlowControl(p)) return;
  PortState& ps = pstate_[p];
  if (!ps.vl15.empty()) {
    SimTime end = Transmit(p, ps.vl15.Pop(), policy::kVl15, 0, now());
    WakeAfterVl15(p, end);
    return;
  }
  uint32_t eligible = 0;
  int control_vl = -1;
  if (!ps.control.empty() && port_active(p)) {
    Packet* h = ps.control.head;
    int vl = h->lrh().vl();
    if (pt.tx[pt.Slot(vl, h->credit_class)].Fits(h->blocks())) {
      eligible |= 1u << vl;
      control_vl = vl;
    }
  }
  SimTime retry = Unpark(p);
  bool dma_ok = dma_free_at_ <= now();
  for (int vl = 0; vl < pt.data_vls; ++vl) {
    Ring& r = ps.rings[vl];
    if (r.qps.empty()) continue;
    if (!dma_ok) {
      retry = std::min(retry, dma_free_at_);
      continue;
    }
    bool any_ready = false;
    // Same order as the choice below (round robin from r.next), so both see the same first QP.
    for (size_t k = 0; k < r.qps.size();) {
      size_t idx = (r.next + k) % r.qps.size();
      const QueuePair& qp = qps_[r.qps[idx]];
      SimTime allowed = AllowedAt(qp);
      if (allowed > now()) {
        retry = std::min(retry, allowed);
        Park(p, r, idx, allowed);  // the entry after it moves into place: same k
        continue;
      }
      ++k;
      any_ready = true;
      if (QpReady(qp, p, vl)) {
        eligible |= 1u << vl;
        break;
      }
      // With one credit pool per VL the QP whose turn it is waits for credits, as an HCA's
      // scheduler does; it is not overtaken by a smaller packet. Per-destination credit classes
      // (VOQnet) are independent, so there the scan goes on.
      if (pt.classes == 1) break;
    }
    SetStalled(p, vl, any_ready && !(eligible >> vl & 1));
  }
  if (!eligible) {
    if (retry != INT64_MAX) WakeAt(p, retry);
    return;
  }
  int vl = ps.vlarb->Choose(eligible);
  if (vl < 0) return;
  SimTime end;
  if (vl == control_vl) {
    Packet* pkt = ps.control.Pop();
    uint32_t bytes = pkt->wire_bytes();
    end = Transmit(p, pkt, vl, pkt->credit_class, now());
    ps.vlarb->Charge(vl, bytes);
  } else {
    Ring& r = ps.rings[vl];
    size_t n = r.qps.size();
    size_t chosen = n;
    for (size_t k = 0; k < n; ++k) {
      size_t idx = (r.next + k) % n;
      const QueuePair& qp = qps_[r.qps[idx]];
      if (QpReady(qp, p, vl)) {
        chosen = idx;
        break;
      }
      if (pt.classes == 1 && AllowedAt(qp) <= now()) break;
    }
    if (chosen == n) return;
    r.next = chosen + 1;
    SendData(p, vl, r.qps[chosen]);
    // A verbs packet to this port's own LID loops back inside the HCA and leaves the link free.
    end = std::max(pt.tx_free_at, now());
  }
  // New work (a message, a returning ACK) arbitrates itself, so with nothing left the port needs
  // no look when the link frees.
  if (HasWaiting(p)) WakeAt(p, end);
}

bool Hca::HasWaiting(int p) const {
  const PortState& ps = pstate_[p];
  if (!ps.vl15.empty() || !ps.control.empty() || !ps.parked.empty()) return true;
  for (const Ring& r : ps.rings)
    if (!r.qps.empty()) return true;
  return false;
}

void Hca::SendData(int p, int vl, uint32_t qi) {
  QueuePair& qp = qps_[qi];
  if (qp.verbs) {
    VerbsSendData(p, vl, qi);
    return;
  }
  SourceState& src = sources_[qp.source];
  QueuePair::Message& m = qp.messages.front();
  uint32_t payload = NextSegment(qp);
  RcSegment seg;
  seg.slid = lid(p);
  seg.dlid = ctx_->WireLid(qp.dlid);
  seg.sl = qp.sl;
  seg.vl = static_cast<uint8_t>(vl);
  seg.dest_qp = qp.qpn;
  seg.psn = qp.psn++;
  seg.payload = payload;
  seg.first = qp.sent_in_msg == 0;
  seg.last = qp.sent_in_msg + payload == m.bytes;
  seg.ack_req = cc_hooks_ && cc_hooks_->AckEachPacket();
  seg.uc = src.cfg.uc;

  Packet* pkt = NewPacket();
  BuildRcSend(pkt, seg);
  if (qp.resv6a) pkt->bth().set_resv6a(pkt->bth().resv6a() | qp.resv6a);
  pkt->id = NextPacketId();
  pkt->flow = src.cfg.flow;
  pkt->created = m.created;
  pkt->injected = now();
  int cls = ctx_->CreditClassTo(ports_[p].link.peer_lp, qp.dlid);
  uint32_t bytes = pkt->wire_bytes();
  if (cc_hooks_) cc_hooks_->OnSent(*this, qi, *pkt);
  Transmit(p, pkt, vl, cls, now());
  pstate_[p].vlarb->Charge(vl, bytes);
  dma_free_at_ = std::max(dma_free_at_, now()) + cfg_.host_tx.Time(payload);
  stats::FlowStats& fs = flows_->flows[src.cfg.flow];
  fs.tx_payload.Add(now(), payload);
  ++fs.tx_packets;

  qp.sent_in_msg += payload;
  if (qp.sent_in_msg < m.bytes) return;
  qp.messages.pop_front();
  qp.sent_in_msg = 0;
  if (qp.messages.empty()) {
    LeaveRing(p, vl, qi);
  } else if (RouteFront(qi) != vl) {  // the next message goes on another VL
    LeaveRing(p, vl, qi);
    qp.in_ring = true;
    pstate_[p].rings[qp.vl].qps.push_back(qi);
  }
  // A saturating source queues its next message as soon as the previous one is segmented.
  if (src.cfg.arrival == Arrival::kSaturate && src.waiting) {
    src.waiting = false;
    SimTime t = NextOnTime(src.cfg, now());
    if (t < src.cfg.stop) Post(id(), t, kMessage, 0, qp.source);
  }
}

void Hca::LeaveRing(int p, int vl, uint32_t qi) {
  Ring& r = pstate_[p].rings[vl];
  auto it = std::find(r.qps.begin(), r.qps.end(), qi);
  if (it != r.qps.end()) r.Remove(static_cast<size_t>(it - r.qps.begin()));
  qps_[qi].in_ring = false;
}

void Hca::Park(int p, Ring& r, size_t idx, SimTime until) {
  uint32_t qi = r.qps[idx];
  r.Remove(idx);
  qps_[qi].parked = true;
  // A gate closed until further notice (a window waiting for its ACK) is reopened by the
  // SetQpGate that lowers it, which queues the QP then; an entry for "never" would never leave.
  if (until != cc::kGateClosed) pstate_[p].parked.push({until, qi});
}

SimTime Hca::Unpark(int p) {
  auto& heap = pstate_[p].parked;
  while (!heap.empty() && heap.top().first <= now()) {
    uint32_t qi = heap.top().second;
    heap.pop();
    QueuePair& qp = qps_[qi];
    if (!qp.parked) continue;
    SimTime allowed = AllowedAt(qp);
    if (allowed > now()) {  // closed again since (an SL gate): wait for it
      heap.push({allowed, qi});
      continue;
    }
    qp.parked = false;
    pstate_[p].rings[qp.vl].qps.push_back(qi);
  }
  return heap.empty() ? INT64_MAX : heap.top().first;
}

void Hca::SetQpGate(uint32_t qi, SimTime t) {
  QueuePair& qp = qps_[qi];
  // A raised gate is seen by the next arbitration; a lowered one must not wait for the wake
  // that the old gate planned.
  bool lowered = t < qp.gate;
  qp.gate = t;
  if (!lowered || !qp.in_ring) return;
  if (qp.parked) pstate_[qp.port].parked.push({std::max(t, now()), qi});
  WakeAt(qp.port, std::max(t, now()));
}

void Hca::SetSlGate(int p, int sl, SimTime t) {
  SimTime& g = pstate_[p].sl_gate[sl];
  bool lowered = t < g;
  g = t;
  if (!lowered) return;
  // Parked QPs of the SL wait for their old time in the heap: give them the new one (rare: a
  // gate set after a packet is never below the one before it).
  for (uint32_t qi = 0; qi < qps_.size(); ++qi)
    if (qps_[qi].parked && qps_[qi].port == p && qps_[qi].sl == sl)
      pstate_[p].parked.push({std::max(AllowedAt(qps_[qi]), now()), qi});
  WakeAt(p, std::max(t, now()));
}

}  // namespace ibemu::hca
