#include "emulator/hca/hca.h"

#include <algorithm>
#include <cmath>

#include "common/mad/mad_header.h"
#include "common/wire/opcode.h"
#include "emulator/hca/packet_builder.h"
#include "emulator/mgmt/cca.h"
#include "emulator/mgmt/pma.h"
#include "emulator/mgmt/sma.h"
#include "emulator/mgmt/smi.h"

namespace ibemu::hca {

Hca::Hca(engine::LpId id, std::string name, int num_ports, const HcaConfig& cfg,
         const link::FabricContext* ctx, stats::FlowTable* flows, uint64_t seed)
    : ManagedNode(id, std::move(name), num_ports),
      cfg_(cfg),
      ctx_(ctx),
      flows_(flows),
      sl2vl_(num_ports + 1),
      pstate_(num_ports + 1),
      rng_(seed) {
  for (auto& m : sl2vl_)
    for (int sl = 0; sl < 16; ++sl) m[sl] = static_cast<uint8_t>(sl % cfg_.data_vls);
  for (auto& ps : pstate_) {
    ps.rings.resize(cfg_.data_vls);
    policy::VlArbConfig vc = cfg_.vlarb_config;
    vc.data_vls = cfg_.data_vls;
    ps.vlarb = policy::VlArbiterRegistry::Get().Make(cfg_.vlarb, vc);
  }
}

void Hca::Start() {
  Device::Start();
  // QPs are created as destinations are first used; reserving keeps them from being moved.
  size_t dests = 0;
  for (const SourceState& s : sources_)
    for (const auto& ph : s.cfg.phases) dests += ph.dlids.size();
  qps_.reserve(std::min<size_t>(dests, 65536));
  for (uint32_t i = 0; i < sources_.size(); ++i) {
    const TrafficSource& s = sources_[i].cfg;
    if (s.arrival == Arrival::kSaturate)
      Post(id(), NextOnTime(s, s.start), kMessage, 0, i);
    else
      ScheduleNextArrival(i, s.start);
  }
}

double Hca::Uniform01() {
  // 53 random bits: std::uniform_real_distribution is implementation-defined, this is not.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

SimTime Hca::NextOnTime(const TrafficSource& s, SimTime t) const {
  if (s.onoff.on <= 0) return t;
  SimTime period = s.onoff.on + s.onoff.off;
  SimTime phase = (t - s.start) % period;
  return phase < s.onoff.on ? t : t + (period - phase);
}

void Hca::ScheduleNextArrival(uint32_t source, SimTime after) {
  const TrafficSource& s = sources_[source].cfg;
  if (s.rate_bps <= 0) return;
  double mean_ps = static_cast<double>(s.message_bytes) * 8.0 *
                   static_cast<double>(link::kPsPerSec) / static_cast<double>(s.rate_bps);
  double gap = s.arrival == Arrival::kPoisson ? -std::log(1.0 - Uniform01()) * mean_ps : mean_ps;
  SimTime t = NextOnTime(s, after + std::max<SimTime>(1, static_cast<SimTime>(gap)));
  if (t < s.stop) Post(id(), t, kMessage, 0, source);
}

uint16_t Hca::PickDestination(SourceState& s) {
  SimTime t = s.cfg.cycle > 0 ? now() % s.cfg.cycle : now();
  size_t k = 0;
  while (k + 1 < s.cfg.phases.size() && s.cfg.phases[k + 1].from <= t) ++k;
  const TrafficSource::Phase& ph = s.cfg.phases[k];
  if (ph.dlids.size() == 1) return ph.dlids[0];
  if (ph.cum_weights.empty())
    return ph.dlids[static_cast<size_t>(Uniform01() * static_cast<double>(ph.dlids.size()))];
  uint32_t x = static_cast<uint32_t>(Uniform01() * ph.cum_weights.back());
  size_t i =
      std::upper_bound(ph.cum_weights.begin(), ph.cum_weights.end(), x) - ph.cum_weights.begin();
  return ph.dlids[std::min(i, ph.dlids.size() - 1)];
}

uint32_t Hca::QpFor(uint32_t source, uint16_t dlid) {
  uint64_t key = uint64_t{source} << 16 | dlid;
  auto it = qp_index_.find(key);
  if (it != qp_index_.end()) return it->second;
  QueuePair qp;
  qp.source = source;
  qp.dlid = dlid;
  qp.sl = sources_[source].cfg.sl;
  qp.port = static_cast<uint8_t>(sources_[source].cfg.port);
  qp.qpn = 0x100 + static_cast<uint32_t>(qps_.size());
  qps_.push_back(qp);
  uint32_t idx = static_cast<uint32_t>(qps_.size() - 1);
  qp_index_[key] = idx;
  return idx;
}

void Hca::NewMessage(uint32_t source) {
  SourceState& s = sources_[source];
  uint16_t dlid = PickDestination(s);
  uint32_t qi = QpFor(source, dlid);
  QueuePair& qp = qps_[qi];
  qp.messages.push_back({s.cfg.message_bytes, now()});
  ++flows_->flows[s.cfg.flow].messages;
  if (s.cfg.arrival == Arrival::kSaturate) s.waiting = true;
  if (!qp.in_ring) {
    qp.in_ring = true;
    pstate_[qp.port].rings[sl2vl_[qp.port][qp.sl]].qps.push_back(qi);
  }
  Arbitrate(qp.port);
}

uint32_t Hca::NextSegment(const QueuePair& qp) const {
  return std::min(cfg_.mtu, qp.messages.front().bytes - qp.sent_in_msg);
}

bool Hca::QpReady(const QueuePair& qp, int p, int vl) const {
  if (qp.messages.empty() || AllowedAt(qp) > now() || !port_active(p)) return false;
  if (ctx_->WireLid(qp.dlid) == 0) return false;  // the SM has not given the destination a LID
  uint32_t payload = NextSegment(qp);
  uint32_t wire = wire::kLrhBytes + wire::kBthBytes + payload + (4 - payload % 4) % 4 +
                  engine::kIcrcBytes + engine::kVcrcBytes;
  uint32_t blocks = (wire + wire::kCreditBlockBytes - 1) / wire::kCreditBlockBytes;
  const link::Port& pt = ports_[p];
  int dest = ctx_->DestIndex(qp.dlid);
  int cls = ctx_->queuing->CreditClass(dest < 0 ? 0 : dest);
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
    WakeAt(p, Transmit(p, ps.vl15.Pop(), policy::kVl15, 0, now()));
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
  int vl = ps.vlarb->Pick(eligible);
  if (vl < 0) return;
  SimTime end;
  if (vl == control_vl) {
    Packet* pkt = ps.control.Pop();
    uint32_t bytes = pkt->wire_bytes();
    end = Transmit(p, pkt, vl, pkt->credit_class, now());
    ps.vlarb->Sent(vl, bytes);
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
    end = pt.tx_free_at;
  }
  WakeAt(p, end);
}

void Hca::SendData(int p, int vl, uint32_t qi) {
  QueuePair& qp = qps_[qi];
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

  Packet* pkt = NewPacket();
  BuildRcSend(pkt, seg);
  pkt->id = NextPacketId();
  pkt->flow = src.cfg.flow;
  pkt->created = m.created;
  pkt->injected = now();
  int dest = ctx_->DestIndex(qp.dlid);
  int cls = ctx_->queuing->CreditClass(dest < 0 ? 0 : dest);
  uint32_t bytes = pkt->wire_bytes();
  if (cc_hooks_) cc_hooks_->OnSent(*this, qi, *pkt);
  Transmit(p, pkt, vl, cls, now());
  pstate_[p].vlarb->Sent(vl, bytes);
  dma_free_at_ = std::max(dma_free_at_, now()) + cfg_.host_tx.Time(payload);
  stats::FlowStats& fs = flows_->flows[src.cfg.flow];
  fs.tx_payload.Add(now(), payload);
  ++fs.tx_packets;

  qp.sent_in_msg += payload;
  if (qp.sent_in_msg < m.bytes) return;
  qp.messages.pop_front();
  qp.sent_in_msg = 0;
  if (qp.messages.empty()) {
    Ring& r = pstate_[p].rings[vl];
    r.Remove(static_cast<size_t>(std::find(r.qps.begin(), r.qps.end(), qi) - r.qps.begin()));
    qp.in_ring = false;
  }
  // A saturating source queues its next message as soon as the previous one is segmented.
  if (src.cfg.arrival == Arrival::kSaturate && src.waiting) {
    src.waiting = false;
    SimTime t = NextOnTime(src.cfg, now());
    if (t < src.cfg.stop) Post(id(), t, kMessage, 0, qp.source);
  }
}

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
  if (cc_hooks_ && op <= wire::opcode::kRcSendOnly) {
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
  if (op == wire::opcode::kRcAcknowledge) {
    OnResponse(pkt);
    FreePacket(pkt);
    return;
  }
  if (op <= wire::opcode::kRcSendOnly && pkt->flow != engine::kNoFlow) {
    stats::FlowStats& fs = flows_->flows[pkt->flow];
    fs.rx_payload.Add(now(), pkt->payload_len);
    ++fs.rx_packets;
    fs.latency.Add(now() - pkt->created);
  }
  if (bth.ack_req()) {
    PortState& ps = pstate_[p];
    wire::Lrh lrh = pkt->lrh();
    Packet* ack = NewPacket();
    uint8_t sl = lrh.sl();
    uint32_t& msn = msn_[uint64_t{lrh.slid()} << 24 | bth.dest_qp()];
    BuildRcAck(ack, lid(p), lrh.slid(), sl, sl2vl_[p][sl], bth.dest_qp(), bth.psn(), ++msn);
    if (pkt->cc_echo == static_cast<uint8_t>(cc::Echo::kOnAck)) ack->bth().set_becn(true);
    ack->id = NextPacketId();
    ack->created = now();
    int dest = ctx_->DestIndex(lrh.slid());
    ack->credit_class = static_cast<uint16_t>(ctx_->queuing->CreditClass(dest < 0 ? 0 : dest));
    ps.control.Push(ack);
    Arbitrate(p);
  }
  FreePacket(pkt);
}

void Hca::SendCnp(int p, Packet& m) {
  wire::Lrh lrh = m.lrh();
  uint8_t sl = lrh.sl();
  Packet* cnp = NewPacket();
  BuildCnp(cnp, lid(p), lrh.slid(), sl, sl2vl_[p][sl], m.bth().dest_qp());
  cnp->id = NextPacketId();
  cnp->created = now();
  int dest = ctx_->DestIndex(lrh.slid());
  cnp->credit_class = static_cast<uint16_t>(ctx_->queuing->CreditClass(dest < 0 ? 0 : dest));
  pstate_[p].control.Push(cnp);
  Arbitrate(p);
}

void Hca::OnResponse(Packet* pkt) {
  // This HCA numbers its QPs from 0x100 in creation order (QpFor), and responses name the QP.
  uint32_t qpn = pkt->bth().dest_qp();
  if (!cc_hooks_ || qpn < 0x100 || qpn - 0x100 >= qps_.size()) return;
  cc_hooks_->OnResponse(*this, qpn - 0x100, *pkt);
}

void Hca::Park(int p, Ring& r, size_t idx, SimTime until) {
  uint32_t qi = r.qps[idx];
  r.Remove(idx);
  qps_[qi].parked = true;
  pstate_[p].parked.push({until, qi});
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
    pstate_[p].rings[sl2vl_[qp.port][qp.sl]].qps.push_back(qi);
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

void Hca::HandleDevice(const engine::Event& e) {
  switch (e.kind) {
    case kCcTimer:
      if (cc_hooks_) cc_hooks_->OnTimer(*this, e.a, e.b);
      return;
    case engine::kSideBandArrive:
      if (cc_hooks_) cc_hooks_->OnSignal(*this, e.a, e.b);
      return;
    case kMessage: {
      const TrafficSource& s = sources_[e.a].cfg;
      if (now() >= s.stop) return;
      NewMessage(e.a);
      if (s.arrival != Arrival::kSaturate) ScheduleNextArrival(e.a, now());
      return;
    }
    case kSinkDone:
      Deliver(e.port, e.pkt);
      return;
  }
}

}  // namespace ibemu::hca

namespace ibemu::hca {

void Hca::VlArbChanged(int p) {
  if (p < 1 || p > num_ports()) return;
  pstate_[p].vlarb = policy::VlArbiterRegistry::Get().Make(
      cfg_.vlarb, mgmt::VlArbConfigOf(port_mgmt_[p], cfg_.vlarb_config, cfg_.data_vls));
}

void Hca::OnLinkChanged(int p, bool up) {
  if (up) Arbitrate(p);
}

void Hca::SendVl15(int p, Packet* pkt) {
  if (!link_up(p)) {
    ++port_mgmt_[p].counters.vl15_dropped;
    FreePacket(pkt);
    return;
  }
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  pstate_[p].vl15.Push(pkt);
  Arbitrate(p);
}

void Hca::SendGmp(int p, Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  lrh.set_vl(sl2vl_[p][lrh.sl()]);
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  int dest = ctx_->DestIndex(lrh.dlid());
  pkt->credit_class = static_cast<uint16_t>(ctx_->queuing->CreditClass(dest < 0 ? 0 : dest));
  pstate_[p].control.Push(pkt);
  Arbitrate(p);
}

void Hca::RunSma(int p, Packet* pkt, const mgmt::MadAddress& from) {
  mad::MadView m{pkt->mad->data()};
  mgmt::AgentVerdict v = mgmt::HandleSmp(*this, p, m);
  if (v == mgmt::AgentVerdict::kNotMine) {
    DeliverToClient(p, pkt);  // traps, SMInfo and responses are for an SM on this port
    return;
  }
  if (v == mgmt::AgentVerdict::kDrop) {
    FreePacket(pkt);
    return;
  }
  if (m.is_dr()) {
    mgmt::SmiDecision d = mgmt::SmiSend(m, false, p, num_ports());
    if (d.action == mgmt::SmiAction::kForward) return SendVl15(d.port, pkt);
    if (d.action == mgmt::SmiAction::kLocal) {  // the SM asked its own node
      DeliverToClient(p, pkt);
      return;
    }
    FreePacket(pkt);
    return;
  }
  mgmt::MadAddress r;
  r.slid = lid(p);
  r.dlid = from.slid;
  r.vl = policy::kVl15;
  mgmt::BuildMadPacket(pkt, r);
  if (port_mgmt_[p].OwnsLid(r.dlid)) {  // the SM queried its own port by LID
    DeliverToClient(p, pkt);
    return;
  }
  SendVl15(p, pkt);
}

void Hca::RunGsAgents(int p, Packet* pkt, const mgmt::MadAddress& from) {
  mad::MadView m{pkt->mad->data()};
  // The PMA and the CCA answer here; SA (an SM's), responses and traps go to the attached
  // program. A CC MAD the CCA refuses (a wrong CC_Key) is dropped, not passed on.
  mgmt::AgentVerdict v = mgmt::AgentVerdict::kNotMine;
  if (m.mgmt_class() == mad::mgmt_class::kPerf)
    v = mgmt::HandlePerf(*this, p, m);
  else if (m.mgmt_class() == mad::mgmt_class::kCongestion)
    v = mgmt::HandleCongestion(*this, p, m, from);
  if (v == mgmt::AgentVerdict::kDrop) {
    FreePacket(pkt);
    return;
  }
  if (v != mgmt::AgentVerdict::kRespond && v != mgmt::AgentVerdict::kTrap) {
    DeliverToClient(p, pkt);
    return;
  }
  mgmt::MadAddress r = v == mgmt::AgentVerdict::kTrap ? mgmt::TrapAddress(cc_state(p).trap, lid(p))
                                                      : mgmt::GsResponseAddress(from, lid(p));
  mgmt::BuildMadPacket(pkt, r);
  if (port_mgmt_[p].OwnsLid(r.dlid)) {
    DeliverToClient(p, pkt);
    return;
  }
  SendGmp(p, pkt);
}

void Hca::OnManagementPacket(int p, Packet* pkt) {
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {  // malformed: a receive error (IBA 16.1.3.5)
    ++port_mgmt_[p].counters.rcv_errors;
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  if (a.vl != policy::kVl15) return RunGsAgents(p, pkt, a);
  if (m.mgmt_class() == mad::mgmt_class::kSubnDirected) {
    mgmt::SmiDecision d = mgmt::SmiReceive(m, false, p, num_ports());
    if (d.action != mgmt::SmiAction::kLocal) {  // a CA never relays
      ++port_mgmt_[p].counters.vl15_dropped;
      FreePacket(pkt);
      return;
    }
    if (m.dr_direction()) {  // back at the SM's node
      DeliverToClient(p, pkt);
      return;
    }
    return RunSma(p, pkt, a);
  }
  if (m.mgmt_class() == mad::mgmt_class::kSubnLid &&
      (port_mgmt_[p].OwnsLid(a.dlid) || a.dlid == mad::kPermissiveLid))
    return RunSma(p, pkt, a);
  ++port_mgmt_[p].counters.vl15_dropped;
  FreePacket(pkt);
}

void Hca::OnClientMad(int p, Packet* pkt) {
  // The program filled the MAD and the destination (dlid, dest QP, SL, P_Key); the port
  // supplies its own LID and QP.
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  bool smp = m.mgmt_class() == mad::mgmt_class::kSubnLid || m.is_dr();
  a.slid = lid(p);
  a.src_qp = smp ? 0 : 1;
  if (smp) {
    a.vl = policy::kVl15;
    a.dest_qp = 0;
    a.qkey = 0;
    if (m.is_dr() && m.dr_slid() == mad::kPermissiveLid) a.slid = a.dlid = mad::kPermissiveLid;
  }
  mgmt::BuildMadPacket(pkt, a);
  // A directed route that starts at another node: the LID-routed part first (its LRH goes to
  // that node's LID, and it starts the directed part).
  if (m.is_dr() && m.dr_slid() != mad::kPermissiveLid && !port_mgmt_[p].OwnsLid(a.dlid))
    return SendVl15(p, pkt);
  if (m.is_dr()) {
    mgmt::SmiDecision d = mgmt::SmiSend(m, false, p, num_ports());
    if (d.action == mgmt::SmiAction::kForward) return SendVl15(d.port, pkt);
    if (d.action == mgmt::SmiAction::kLocal) {
      if (m.dr_direction())
        DeliverToClient(p, pkt);
      else
        RunSma(p, pkt, a);
      return;
    }
    FreePacket(pkt);
    return;
  }
  if (port_mgmt_[p].OwnsLid(a.dlid) || (smp && a.dlid == mad::kPermissiveLid)) {
    // Addressed to this port: its own agents answer without touching the link.
    a.slid = lid(p);
    if (smp)
      RunSma(p, pkt, a);
    else
      RunGsAgents(p, pkt, a);
    return;
  }
  if (smp)
    SendVl15(p, pkt);
  else
    SendGmp(p, pkt);
}

}  // namespace ibemu::hca
