#include "emulator/switch/switch.h"

#include <algorithm>

#include "common/mad/smp_attributes.h"
#include "emulator/mgmt/cca.h"
#include "emulator/mgmt/pma.h"
#include "emulator/mgmt/sma.h"
#include "emulator/mgmt/smi.h"

namespace ibemu::sw {

Switch::Switch(engine::LpId id, std::string name, int num_ports, const SwitchConfig& cfg,
               const link::FabricContext* ctx)
    : ManagedNode(id, std::move(name), num_ports), cfg_(cfg), ctx_(ctx) {
  int n = num_ports + 1;
  // One Congestion Control Agent answers for every port, with a setting per port (0..N).
  cc_.resize(1);
  cc_[0].ports.resize(static_cast<size_t>(n));
  sl2vl_.assign(static_cast<size_t>(n) * n * 16, 0);
  // Default SL2VL: SL modulo the data VLs, the usual map on a port with fewer VLs than SLs.
  for (int in = 0; in < n; ++in)
    for (int out = 0; out < n; ++out)
      for (int sl = 0; sl < 16; ++sl) SetSl2Vl(in, out, sl, sl % cfg_.data_vls);

  policy::QueuingContext qc;
  qc.num_ports = num_ports;
  qc.num_destinations = ctx_->num_destinations;
  qc.vl_capacity_blocks = cfg_.vl_buffer_blocks;
  base_queues_ = ctx_->queuing->NumQueues(qc);
  inputs_.resize(n);
  outputs_.resize(n);
  vl15_.resize(n);
  MakeQueues(base_queues_);
  for (int p = 0; p < n; ++p) {
    Input& in = inputs_[p];
    size_t words = (static_cast<size_t>(n) + 63) / 64;
    in.req_to.assign(n, 0);
    in.req_to_mask.assign(words, 0);
    Output& out = outputs_[p];
    out.req.assign(cfg_.data_vls, std::vector<ReqList>(n));
    out.req_mask.assign(cfg_.data_vls, std::vector<uint64_t>(words, 0));
    out.queued_from.assign(cfg_.data_vls, std::vector<uint32_t>(n, 0));
    policy::VlArbConfig vc = cfg_.vlarb_config;
    vc.data_vls = cfg_.data_vls;
    out.vlarb = policy::VlArbiterRegistry::Get().Make(cfg_.vlarb, vc);
    out.xbar = policy::InputArbiterRegistry::Get().Make(cfg_.xbar, n);
  }
}

void Switch::MakeQueues(int nq) {
  for (size_t p = 0; p < inputs_.size(); ++p) {
    Input& in = inputs_[p];
    in.vl.assign(cfg_.data_vls, std::vector<Queue>(static_cast<size_t>(nq)));
    for (int v = 0; v < cfg_.data_vls; ++v)
      for (int q = 0; q < nq; ++q) {
        in.vl[v][q].in = static_cast<uint16_t>(p);
        in.vl[v][q].vl = static_cast<uint8_t>(v);
        in.vl[v][q].index = static_cast<uint32_t>(q);
      }
  }
}

void Switch::SetCc(std::unique_ptr<cc::SwitchCc> c) {
  cc_hooks_ = std::move(c);
  int nq = cc_hooks_ ? cc_hooks_->NumQueues(base_queues_) : base_queues_;
  if (nq != static_cast<int>(inputs_[0].vl[0].size())) MakeQueues(nq);
  xbar_picks_queues_ = cc_hooks_ && cc_hooks_->ArbitratesQueues();
}

void Switch::Start() {
  bool first = true;
  for (int p = 1; p <= num_ports(); ++p) {
    const link::LinkEnd& l = ports_[p].link;
    if (l.connected && (first || l.rate.data_bps() > xbar_rate_.data_bps())) xbar_rate_ = l.rate;
    first = first && !l.connected;
  }
  Device::Start();
}

void Switch::Drop(int in, Packet* pkt) {
  ++dropped_;
  ++ports_[in].stats.dropped_no_route;
  Release(in, pkt->lrh().vl(), pkt->credit_class, pkt->blocks());
  FreePacket(pkt);
}

void Switch::OnPacket(int in, Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  uint16_t dlid = lrh.dlid();
  if (lrh.vl() == policy::kVl15) {
    // Directed-route SMPs and SMPs for this switch go to its SMI; other LID-routed SMPs follow
    // the LFT on VL15 (IBA 14.2.2).
    bool dr = pkt->mad && (*pkt->mad)[1] == mad::mgmt_class::kSubnDirected;
    if ((dr && dlid == mad::kPermissiveLid) || port_mgmt_[0].OwnsLid(dlid)) {
      QueueForAgents(in, pkt);
      return;
    }
    int out = LftEntry(dlid);
    if (out == kNoRoute || out == 0 || out == in || out > num_ports()) {
      DropVl15(in, pkt);
      return;
    }
    ForwardVl15(out, pkt);
    return;
  }
  if (port_mgmt_[0].OwnsLid(dlid) && pkt->mad) {
    // A GS MAD (PerfMgt, CC) for the switch: the management port takes it off the buffer.
    Release(in, lrh.vl(), pkt->credit_class, pkt->blocks());
    QueueForAgents(in, pkt);
    return;
  }
  int out = dlid < lft_.size() ? lft_[dlid] : kNoRoute;
  // No route, a route to the management port, or back out of the input port: IBA 18.2.4.3.2 has
  // the switch discard such packets. So does a port that may not carry data yet.
  if (out == kNoRoute || out == 0 || out == in || out > num_ports() ||
      !ports_[out].link.connected || ports_[in].port_state < 3) {
    ++port_mgmt_[in].counters.rcv_switch_relay_errors;
    Drop(in, pkt);
    return;
  }
  if (!port_active(out)) {
    ++port_mgmt_[out].counters.xmit_discards;
    Drop(in, pkt);
    return;
  }
  int in_vl = lrh.vl();
  int out_vl = Sl2Vl(in, out, lrh.sl());
  if (out_vl >= ports_[out].data_vls || in_vl >= cfg_.data_vls) {  // VL15 or unprovisioned VL
    Drop(in, pkt);
    return;
  }
  // The header must be in before the LFT lookup, and the lookup and crossbar setup take the
  // switch latency. Cut-through into a faster output waits until the rest of the packet will
  // arrive before the output needs it, so the output never runs dry mid-packet.
  SimTime routed =
      pkt->head_arrival + ports_[in].link.rate.SerializationTime(pkt->hdr_len) + cfg_.latency;
  SimTime no_underrun =
      pkt->tail_arrival - ports_[out].link.rate.SerializationTime(pkt->wire_bytes());
  Enqueue(in, in_vl, out, out_vl, std::max(routed, no_underrun), pkt);
}

void Switch::Enqueue(int in, int in_vl, int out, int out_vl, SimTime ready_at, Packet* pkt) {
  pkt->out_port = static_cast<uint16_t>(out);
  pkt->out_vl = static_cast<uint8_t>(out_vl);
  pkt->ready_at = ready_at;
  int dest = ctx_->DestIndex(pkt->lrh().dlid());
  int qi = ctx_->queuing->Queue(*pkt, out, dest < 0 ? 0 : dest);
  if (cc_hooks_) qi = cc_hooks_->Queue(*this, in, in_vl, out, out_vl, *pkt, qi);
  pkt->queue = static_cast<uint16_t>(qi);
  Queue& q = inputs_[in].vl[in_vl][qi];
  bool was_empty = q.q.empty();
  q.q.Push(pkt);
  CountQueued(in, *pkt, true);
  if (cc_hooks_) cc_hooks_->OnEnqueue(*this, in, in_vl, out, out_vl, *pkt);
  if (was_empty) HeadChanged(&q);
}

void Switch::CountQueued(int in, const Packet& p, bool add) {
  Output& o = outputs_[p.out_port];
  uint32_t b = p.blocks();
  uint32_t& from = o.queued_from[p.out_vl][in];
  Input& input = inputs_[in];
  if (add) {
    input.arriving = &p;
    input.arriving_tail = p.tail_arrival;
    input.arriving_out = p.out_port;
    input.arriving_vl = p.out_vl;
    input.arriving_blocks = b;
  } else if (input.arriving == &p) {
    input.arriving = nullptr;
  }
  if (add) {
    o.queued_blocks[p.out_vl] += b;
    if (from == 0) ++o.contributors[p.out_vl];
    from += b;
  } else {
    o.queued_blocks[p.out_vl] -= b;
    from -= b;
    if (from == 0) --o.contributors[p.out_vl];
  }
}

uint32_t Switch::ArrivedBlocksFrom(int in, int out, int vl) const {
  const Input& i = inputs_[in];
  uint32_t q = outputs_[out].queued_from[vl][in];
  bool arriving =
      i.arriving && i.arriving_tail > now() && i.arriving_out == out && i.arriving_vl == vl;
  return arriving ? q - i.arriving_blocks : q;
}

uint32_t Switch::ArrivedBlocks(int out, int vl) const {
  const Output& o = outputs_[out];
  uint32_t q = o.queued_blocks[vl];
  for (size_t in = 0; in < inputs_.size(); ++in) {
    const Input& i = inputs_[in];
    if (i.arriving && i.arriving_tail > now() && i.arriving_out == out && i.arriving_vl == vl &&
        o.queued_from[vl][in] != 0)
      q -= i.arriving_blocks;
  }
  return q;
}

void Switch::HeadChanged(Queue* q) {
  while (!q->q.empty() && !link_up(q->q.head->out_port)) DiscardHead(q);
  if (q->q.empty()) return;
  Packet* h = q->q.head;
  if (h->ready_at <= now()) {
    Register(q);
  } else {
    Post(id(), h->ready_at, kHeadReady, q->in, q->vl, q->index);
  }
}

void Switch::Register(Queue* q) {
  Packet* h = q->q.head;
  Output& o = outputs_[h->out_port];
  ReqList& r = o.req[h->out_vl][q->in];
  q->next_req = nullptr;
  q->registered = true;
  if (r.last)
    r.last->next_req = q;
  else
    r.first = q;
  r.last = q;
  ++o.pending[h->out_vl];
  o.req_mask[h->out_vl][q->in / 64] |= uint64_t{1} << (q->in % 64);
  Input& in = inputs_[q->in];
  if (in.req_to[h->out_port]++ == 0)
    in.req_to_mask[h->out_port / 64] |= uint64_t{1} << (h->out_port % 64);
  Arbitrate(h->out_port);
}

// The first queue of `in` requesting `out` on `vl` whose head can go now, or null. With one credit
// class (standard IB) only the oldest request matters; with per-destination classes (VOQnet) a
// queue whose destination is out of credits must not hold back the others behind it.
Switch::Queue* Switch::Servable(int out, int vl, int in) const {
  const ReqList& r = outputs_[out].req[vl][in];
  if (!r.first) return nullptr;
  if (xbar_picks_queues_) return PickedQueue(out, vl, in);
  const link::Port& pt = ports_[out];
  for (Queue* q = r.first; q; q = q->next_req) {
    const Packet* h = q->q.head;
    if (!InputCanFeed(out, in, *h)) return nullptr;
    if (pt.tx[pt.Slot(vl, h->credit_class)].Fits(h->blocks())) return q;
    if (pt.classes == 1) return nullptr;
  }
  return nullptr;
}

// A transfer may start when the input can supply the packet no slower than the output link
// drains it: an input faster than its outputs feeds several at once, a slower one only when idle.
bool Switch::InputCanFeed(int out, int in, const Packet& h) const {
  uint32_t bytes = h.wire_bytes();
  SimTime slack =
      std::max<SimTime>(0, ports_[out].link.rate.SerializationTime(bytes) - ReadTime(in, bytes));
  return inputs_[in].read_free_at <= now() + slack;
}

bool Switch::CanGo(int out, int vl, int in, const Queue* q) const {
  const link::Port& pt = ports_[out];
  const Packet* h = q->q.head;
  return InputCanFeed(out, in, *h) && pt.tx[pt.Slot(vl, h->credit_class)].Fits(h->blocks());
}

// H6: every queue of the input that requests (out, vl) and could go now is a candidate; the
// mechanism picks one.
Switch::Queue* Switch::PickedQueue(int out, int vl, int in) const {
  pick_queues_.clear();
  pick_ptrs_.clear();
  for (Queue* q = outputs_[out].req[vl][in].first; q; q = q->next_req)
    if (CanGo(out, vl, in, q)) {
      pick_queues_.push_back(static_cast<int>(q->index));
      pick_ptrs_.push_back(q);
    }
  if (pick_ptrs_.empty()) return nullptr;
  int k = cc_hooks_->PickQueue(*this, in, out, vl, pick_queues_.data(),
                               static_cast<int>(pick_queues_.size()));
  return pick_ptrs_[static_cast<size_t>(
      std::clamp<int>(k, 0, static_cast<int>(pick_ptrs_.size()) - 1))];
}

void Switch::Arbitrate(int out) {
  link::Port& pt = ports_[out];
  if (!link_up(out)) return;
  if (pt.tx_free_at > now()) {
    WakeAt(out, pt.tx_free_at);
    return;
  }
  if (SendPendingFlowControl(out)) return;
  if (!vl15_[out].empty()) {
    // VL15 needs no credits and goes before every data VL (IBA 7.6.9).
    WakeAt(out, Transmit(out, vl15_[out].Pop(), policy::kVl15, 0, now()));
    return;
  }
  Output& o = outputs_[out];
  int n = num_ports() + 1;
  uint32_t eligible = 0;
  for (int vl = 0; vl < pt.data_vls; ++vl) {
    if (o.pending[vl] == 0) continue;
    bool credit_blocked = false;
    const std::vector<uint64_t>& mask = o.req_mask[vl];
    for (size_t w = 0; w < mask.size() && !(eligible >> vl & 1); ++w) {
      for (uint64_t bits = mask[w]; bits; bits &= bits - 1) {
        int in = static_cast<int>(w * 64) + __builtin_ctzll(bits);
        if (Servable(out, vl, in)) {
          eligible |= 1u << vl;
          break;
        }
        const Packet* h = o.req[vl][in].first->q.head;
        if (!pt.tx[pt.Slot(vl, h->credit_class)].Fits(h->blocks())) credit_blocked = true;
      }
    }
    if (credit_blocked) o.starved_vls |= 1u << vl;
    SetStalled(out, vl, !(eligible >> vl & 1) && credit_blocked);
  }
  if (!eligible) return;
  int vl = o.vlarb->Pick(eligible);
  if (vl < 0) return;
  const std::vector<uint64_t>& mask = o.req_mask[vl];
  auto servable = [&](int i) {
    return (mask[i / 64] >> (i % 64) & 1) && Servable(out, vl, i) != nullptr;
  };
  int in = o.xbar->Pick(vl, n, servable);
  if (in < 0) return;  // input 0 is the management port

  ReqList& r = o.req[vl][in];
  Queue* q = Servable(out, vl, in);
  Queue* prev = nullptr;
  for (Queue* x = r.first; x != q; x = x->next_req) prev = x;
  (prev ? prev->next_req : r.first) = q->next_req;
  if (r.last == q) r.last = prev;
  if (!r.first) o.req_mask[vl][in / 64] &= ~(uint64_t{1} << (in % 64));
  q->next_req = nullptr;
  if (--inputs_[in].req_to[out] == 0)
    inputs_[in].req_to_mask[out / 64] &= ~(uint64_t{1} << (out % 64));
  q->registered = false;
  --o.pending[vl];
  Packet* pkt = q->q.Pop();
  int in_vl = q->vl;
  int cls = pkt->credit_class;
  uint32_t blocks = pkt->blocks();
  uint32_t bytes = pkt->wire_bytes();

  // The crossbar reads the packet out of the input buffer with the input's bandwidth, and never
  // before its tail has arrived (cut-through); the buffer space is free once it is read.
  Input& input = inputs_[in];
  SimTime read_end = std::max(now(), input.read_free_at) + ReadTime(in, bytes);
  input.read_free_at = read_end;
  SimTime release = std::max(read_end, pkt->tail_arrival);
  Post(id(), release, kInputRelease, static_cast<uint16_t>(in),
       static_cast<uint32_t>(in_vl | cls << 8), blocks);

  CountQueued(in, *pkt, false);
  if (cc_hooks_) {
    cc_hooks_->OnDequeue(*this, in, in_vl, out, vl, *pkt);
    cc_hooks_->OnTransmit(*this, in, out, vl, pkt);
  }
  o.starved_vls &= ~(1u << vl);
  SimTime end = Transmit(out, pkt, vl, cls, std::max(pkt->tail_arrival, read_end));
  o.vlarb->Sent(vl, bytes);
  SetStalled(out, vl, false);
  // Look again when the link frees only if something else is waiting; a request that registers
  // later wakes the output itself.
  bool waiting = false;
  for (int v = 0; v < pt.data_vls && !waiting; ++v) waiting = o.pending[v] != 0;
  if (waiting) WakeAt(out, end);
  if (!q->q.empty()) HeadChanged(q);
}

void Switch::HandleDevice(const engine::Event& e) {
  switch (e.kind) {
    case kHeadReady: {
      Queue& q = inputs_[e.port].vl[e.a][e.b];
      if (!q.q.empty() && !q.registered && q.q.head->ready_at <= now()) HeadChanged(&q);
      return;
    }
    case kCcTimer:
      if (cc_hooks_) cc_hooks_->OnTimer(*this, e.a, e.b);
      return;
    case engine::kSideBandArrive:
      if (cc_hooks_) cc_hooks_->OnSignal(*this, e.a, e.b);
      return;
    case kInputRelease: {
      Release(e.port, static_cast<int>(e.a & 0xFF), static_cast<int>(e.a >> 8),
              static_cast<uint32_t>(e.b));
      // The input is free again: let the outputs it requests look, starting at a rotating
      // position so no output is favoured.
      Input& input = inputs_[e.port];
      int n = num_ports() + 1;
      int start = input.next_poke;
      input.next_poke = (input.next_poke + 1) % n;
      for (int k = 0; k < n; ++k) {
        int out = (start + k) % n;
        if (input.req_to_mask[out / 64] >> (out % 64) & 1 && ports_[out].tx_free_at <= now())
          Arbitrate(out);
      }
      return;
    }
  }
}

}  // namespace ibemu::sw

namespace ibemu::sw {

void Switch::SetLftEntry(uint32_t lid, uint8_t port) {
  if (lid >= lft_.size()) {
    if (port == kNoRoute) return;
    lft_.resize(lid + 1, kNoRoute);
  }
  lft_[lid] = port;
}

void Switch::VlArbChanged(int port) {
  if (port < 1 || port > num_ports()) return;
  outputs_[port].vlarb = policy::VlArbiterRegistry::Get().Make(
      cfg_.vlarb, mgmt::VlArbConfigOf(port_mgmt_[port], cfg_.vlarb_config, cfg_.data_vls));
}

void Switch::DropVl15(int in, Packet* pkt) {
  ++port_mgmt_[in].counters.vl15_dropped;
  FreePacket(pkt);
}

void Switch::ForwardVl15(int out, Packet* pkt) {
  if (out < 1 || out > num_ports() || !link_up(out)) {
    ++port_mgmt_[out < 1 || out > num_ports() ? 0 : out].counters.vl15_dropped;
    FreePacket(pkt);
    return;
  }
  vl15_[out].Push(pkt);
  Arbitrate(out);
}

void Switch::OnManagementPacket(int in, Packet* pkt) {
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {  // malformed: a receive error (IBA 16.1.3.5)
    ++port_mgmt_[in].counters.rcv_errors;
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  if (a.vl == policy::kVl15 && m.mgmt_class() == mad::mgmt_class::kSubnDirected)
    return OnDirectedRoute(in, pkt, m);
  if (a.vl == policy::kVl15) {
    if (m.mgmt_class() != mad::mgmt_class::kSubnLid ||
        mgmt::HandleSmp(*this, in, m) != mgmt::AgentVerdict::kRespond)
      return DropVl15(in, pkt);
    return SendSmpByLid(a.slid, pkt);
  }
  // A GS MAD for the switch: its PMA and its CCA answer; other classes are dropped.
  mgmt::AgentVerdict v = mgmt::AgentVerdict::kNotMine;
  if (a.dest_qp == 1 && m.mgmt_class() == mad::mgmt_class::kPerf)
    v = mgmt::HandlePerf(*this, in, m);
  else if (a.dest_qp == 1 && m.mgmt_class() == mad::mgmt_class::kCongestion)
    v = mgmt::HandleCongestion(*this, in, m, a);
  if (v == mgmt::AgentVerdict::kTrap) {
    mgmt::BuildMadPacket(pkt, mgmt::TrapAddress(cc_state(0).trap, lid()));
    return SendFromPort0(pkt);
  }
  if (v != mgmt::AgentVerdict::kRespond) {
    FreePacket(pkt);
    return;
  }
  mgmt::BuildMadPacket(pkt, mgmt::GsResponseAddress(a, lid()));
  SendFromPort0(pkt);
}

void Switch::OnDirectedRoute(int in, Packet* pkt, mad::MadView m) {
  using mgmt::SmiAction;
  bool lid_part = m.dr_slid() != mad::kPermissiveLid;
  auto directed = [&] {  // the directed part travels with permissive LIDs in the LRH
    mgmt::MadAddress r;
    r.slid = r.dlid = mad::kPermissiveLid;
    r.vl = policy::kVl15;
    mgmt::BuildMadPacket(pkt, r);
  };
  // Back at the node where the directed part started: LID-route it to the requester (C14-13:3),
  // or, pure DR, it was for an SM here (there is none).
  auto returned = [&] {
    if (!lid_part) return DropVl15(in, pkt);
    SendSmpByLid(m.dr_slid(), pkt);
  };
  mgmt::SmiDecision d;
  if (lid_part && !m.dr_direction() && m.hop_ptr() == 0) {
    // The LID-routed part ends here: the directed part starts at this switch.
    d = mgmt::SmiSend(m, true, 0, num_ports());
    if (d.action == SmiAction::kForward) {
      directed();
      return ForwardVl15(d.port, pkt);
    }
  } else {
    d = mgmt::SmiReceive(m, true, in, num_ports());
    if (d.action == SmiAction::kForward) return ForwardVl15(d.port, pkt);
    if (d.action == SmiAction::kLocal && m.dr_direction()) return returned();
  }
  if (d.action == SmiAction::kDrop) return DropVl15(in, pkt);
  if (mgmt::HandleSmp(*this, in, m) != mgmt::AgentVerdict::kRespond) return DropVl15(in, pkt);
  d = mgmt::SmiSend(m, true, 0, num_ports());
  if (d.action == SmiAction::kForward) {
    directed();
    return ForwardVl15(d.port, pkt);
  }
  if (d.action == SmiAction::kLocal) return returned();  // hop count 0
  DropVl15(in, pkt);
}

void Switch::SendFromPort0(Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  int out = LftEntry(lrh.dlid());
  if (out == kNoRoute || out == 0 || out > num_ports() || !port_active(out)) {
    FreePacket(pkt);
    return;
  }
  int vl = Sl2Vl(0, out, lrh.sl());
  if (vl >= ports_[out].data_vls) {
    FreePacket(pkt);
    return;
  }
  lrh.set_vl(static_cast<uint8_t>(vl));
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  pkt->head_arrival = pkt->tail_arrival = now();
  pkt->in_port = 0;
  int dest = ctx_->DestIndex(lrh.dlid());
  pkt->credit_class = static_cast<uint16_t>(ctx_->queuing->CreditClass(dest < 0 ? 0 : dest));
  // Charge the management port's (internal) buffer, which the crossbar read releases.
  link::Port& p0 = ports_[0];
  p0.rx[p0.Slot(vl, pkt->credit_class)].used += pkt->blocks();
  p0.vl_used[vl] += pkt->blocks();
  Enqueue(0, vl, out, vl, now(), pkt);
}

void Switch::OnLinkChanged(int p, bool up) {
  // IBA 14.2.5.4: a port state change sets PortStateChange and traps to the SM (trap 128).
  node_mgmt_.sw.port_state_change = true;
  SendTrap128();
  if (up)
    Arbitrate(p);
  else
    DiscardQueuedFor(p);
}

void Switch::DiscardHead(Queue* q) {
  Packet* pkt = q->q.Pop();
  CountQueued(q->in, *pkt, false);
  if (cc_hooks_) cc_hooks_->OnDequeue(*this, q->in, q->vl, pkt->out_port, pkt->out_vl, *pkt);
  ++port_mgmt_[pkt->out_port].counters.xmit_discards;
  ++dropped_;
  Release(q->in, q->vl, pkt->credit_class, pkt->blocks());
  FreePacket(pkt);
}

void Switch::DiscardQueuedFor(int out) {
  while (!vl15_[out].empty()) {
    ++port_mgmt_[out].counters.vl15_dropped;
    FreePacket(vl15_[out].Pop());
  }
  Output& o = outputs_[out];
  for (size_t vl = 0; vl < o.req.size(); ++vl) {
    for (size_t in = 0; in < o.req[vl].size(); ++in) {
      ReqList& r = o.req[vl][in];
      while (Queue* q = r.first) {
        r.first = q->next_req;
        q->next_req = nullptr;
        q->registered = false;
        --o.pending[vl];
        if (--inputs_[in].req_to[out] == 0)
          inputs_[in].req_to_mask[out / 64] &= ~(uint64_t{1} << (out % 64));
        HeadChanged(q);  // discards the heads bound for `out`, requeues the rest
      }
      r.last = nullptr;
    }
    std::fill(o.req_mask[vl].begin(), o.req_mask[vl].end(), 0);
  }
}

void Switch::SendTrap128() {
  const mgmt::PortMgmt& p0 = port_mgmt_[0];
  if (p0.sm_lid == 0 || p0.lid == 0) return;
  int out = LftEntry(p0.sm_lid);
  if (out == kNoRoute || out == 0 || out > num_ports() || !link_up(out)) return;
  Packet* pkt = NewPacket();
  pkt->mad = std::make_unique<engine::MadBytes>();
  engine::MadBytes& b = *pkt->mad;
  b.fill(0);
  using namespace mad;
  b[0] = 1;
  b[1] = mgmt_class::kSubnLid;
  b[2] = 1;
  b[3] = method::kTrap;
  Set(b.data(), hdr::kTid, ++trap_tid_);
  Set(b.data(), hdr::kAttrId, attr::kNotice);
  uint8_t* d = b.data() + kSmpDataOffset;
  Set(d, notice::kIsGeneric, 1);
  Set(d, notice::kType, notice::kTypeUrgent);
  Set(d, notice::kProducerType, node_info::kTypeSwitch);
  Set(d, notice::kTrapNumber, notice::kTrapLinkStateChange);
  Set(d, notice::kIssuerLid, p0.lid);
  Set(d, notice::kDataLid, p0.lid);
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  SendSmpByLid(p0.sm_lid, pkt);
}

void Switch::SendSmpByLid(uint16_t dlid, Packet* pkt) {
  mgmt::MadAddress r;
  r.slid = lid();
  r.dlid = dlid;
  r.vl = policy::kVl15;
  mgmt::BuildMadPacket(pkt, r);
  ForwardVl15(LftEntry(dlid), pkt);
}

}  // namespace ibemu::sw
