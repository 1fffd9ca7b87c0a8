#include "emulator/link/device.h"

#include "common/wire/bth.h"
#include "common/wire/flow_control_packet.h"

namespace ibemu::link {

Device::Device(engine::LpId id, std::string name, int num_ports)
    : LogicalProcess(id),
      ports_(num_ports + 1),
      peer_enabled_(num_ports + 1, 1),
      name_(std::move(name)) {
  for (int p = 0; p <= num_ports; ++p) ports_[p].number = p;
}

void Device::ConfigureBuffers(int p, int data_vls, int classes, uint32_t class_capacity) {
  link::Port& pt = ports_[p];
  pt.data_vls = data_vls;
  pt.classes = classes;
  pt.tx.assign(data_vls * classes, {});
  pt.rx.assign(data_vls * classes, {});
  for (auto& r : pt.rx) r.capacity = class_capacity;
  pt.vl_used.assign(data_vls, 0);
}

void Device::Start() {
  for (link::Port& pt : ports_) {
    if (stats_cfg_.bins > 0) {
      pt.stats.rx_occupancy.resize(pt.data_vls);
      pt.stats.credit_stalled.resize(pt.data_vls);
      for (auto& b : pt.stats.rx_occupancy) b.Init(stats_cfg_.interval, stats_cfg_.bins);
      for (auto& b : pt.stats.credit_stalled) b.Init(stats_cfg_.interval, stats_cfg_.bins);
    }
    if (!pt.link.connected) continue;
    // Link bring-up: each receiver advertises its buffer with one FC packet per VL (IBA 7.9.4),
    // so no data moves before the first credits have crossed the link.
    for (link::RxCredits& rx : pt.rx) {
      rx.fc_pending = true;
      ++pt.fc_pending;
    }
    // One event sends the first pending FC packet; each FC packet sent wakes the port when the
    // link is free again (SendFlowControl), and arbitration sends the next pending one before
    // any data (SendPendingFlowControl). So they leave back to back, in slot order. An event per
    // slot sent them at the same times, but each found the link busy and posted itself again:
    // n(n-1)/2 events for n credit classes, 68 million in 20 us of a 256-destination VOQnet
    // fabric (docs/performance.md).
    if (!pt.rx.empty()) Post(id(), 0, kFcSend, static_cast<uint16_t>(pt.number), 0);
  }
}

void Device::Handle(const Event& e) {
  switch (e.kind) {
    case engine::kPacketArrive: {
      link::Port& pt = ports_[e.port];
      Packet* pkt = e.pkt;
      pkt->head_arrival = now() - rx_delay_;
      pkt->tail_arrival = static_cast<SimTime>(e.b);
      pkt->in_port = e.port;
      int vl = pkt->lrh().vl();
      ++pt.stats.rx_packets;
      pt.stats.rx_bytes += pkt->wire_bytes();
      pt.stats.rcv_data_sl[pkt->lrh().sl()] += pkt->wire_bytes();
      if (vl != kVl15) {
        // The transmitter checked credits for (VL, class); the receive side charges the same slot.
        int slot = pt.Slot(vl, pkt->credit_class);
        link::RxCredits& rx = pt.rx[slot];
        rx.abr += pkt->blocks();
        rx.used += pkt->blocks();
        if (rx.used > rx.capacity) ++pt.stats.credit_violations;
        if (rx.used > rx.high_water) rx.high_water = rx.used;
        pt.vl_used[vl] += pkt->blocks();
        if (!pt.stats.rx_occupancy.empty()) {
          pt.stats.rx_occupancy[vl].Set(now(), pt.vl_used[vl]);
          pt.stats.rx_occupancy[vl].AddRect(pkt->head_arrival, now(), pkt->blocks());
        }
      }
      OnPacket(e.port, pkt);
      return;
    }
    case engine::kControlArrive:
      if (link_up(e.port)) OnControl(e.port, e.a, e.b);
      return;
    case engine::kFlowControlArrive:
      OnFlowControl(e);
      return;
    case engine::kLinkStateArrive:
      OnPeerLinkState(e.port, e.a & 1, e.a & 2);
      return;
    case kFcSend:
      // It may have gone out already, ahead of a data packet (SendPendingFlowControl).
      if (ports_[e.port].rx[e.a].fc_pending) SendFlowControl(e.port, static_cast<int>(e.a));
      return;
    case kWake:
      Woken(e.port, e.time);
      return;
    default:
      HandleUpper(e);
  }
}

SimTime Device::Transmit(int p, Packet* pkt, int vl, int cls, SimTime tail_ready) {
  link::Port& pt = ports_[p];
  SimTime t = now();
  pkt->lrh().set_vl(static_cast<uint8_t>(vl));
  pkt->credit_class = static_cast<uint16_t>(cls);
  uint32_t bytes = pkt->wire_bytes();
  if (vl != kVl15) pt.tx[pt.Slot(vl, cls)].blocks_sent += pkt->blocks();
  // Virtual cut-through: the tail cannot leave before it has arrived.
  SimTime end = std::max(t + pt.link.rate.SerializationTime(bytes), tail_ready);
  pt.tx_free_at = end;
  AccountXmitWait(pt);
  pt.data_busy_until = end;
  ++pt.stats.tx_packets;
  pt.stats.tx_bytes += bytes;
  pt.stats.xmit_data_sl[pkt->lrh().sl()] += bytes;
  if (pkt->hdr_len >= wire::kLrhBytes + wire::kBthBytes) {
    // Counted only when set: most packets carry neither, and an unconditional add touched two
    // more cache lines of the port per packet.
    wire::Bth bth = pkt->bth();
    if (bth.fecn()) ++pt.stats.tx_fecn[vl];
    if (bth.becn()) ++pt.stats.tx_becn[vl];
  }
  if (tap_) tap_->OnTransmit(t, id(), p, *pkt);
  Post(pt.link.peer_lp, t + pt.link.latency + pt.link.peer_rx_delay, engine::kPacketArrive,
       pt.link.peer_port, 0, static_cast<uint64_t>(end + pt.link.latency), pkt);
  return end;
}

void Device::Release(int p, int vl, int cls, uint32_t blocks) {
  if (vl == kVl15) return;
  link::Port& pt = ports_[p];
  int slot = pt.Slot(vl, cls);
  link::RxCredits& rx = pt.rx[slot];
  rx.used -= blocks;
  pt.vl_used[vl] -= blocks;
  if (!pt.stats.rx_occupancy.empty()) pt.stats.rx_occupancy[vl].Set(now(), pt.vl_used[vl]);
  if (!link_up(p) || rx.fc_pending) return;
  rx.fc_pending = true;
  ++pt.fc_pending;
  // FC packets go between data packets, never inside one (IBA 7.9.4): wait for the link. The
  // port's arbitration sends a pending FC packet before anything else, so the wake it usually
  // has at that time already serves; an event of its own would be one more per packet-hop.
  if (pt.tx_free_at <= now())
    SendFlowControl(p, slot);
  else
    WakeAt(p, pt.tx_free_at);
}

void Device::SendFlowControl(int p, int slot) {
  link::Port& pt = ports_[p];
  if (pt.tx_free_at > now() || pt.fc_not_before > now()) {
    Post(id(), std::max(pt.tx_free_at, pt.fc_not_before), kFcSend, static_cast<uint16_t>(p),
         static_cast<uint32_t>(slot));
    return;
  }
  link::RxCredits& rx = pt.rx[slot];
  rx.fc_pending = false;
  --pt.fc_pending;
  int vl = slot / pt.classes, cls = slot % pt.classes;
  // The FC packet reports this side's FCTBS for the same VL of the opposite direction and this
  // receive buffer's FCCL.
  wire::FlowControlPacket fc;
  fc.vl = static_cast<uint8_t>(vl);
  fc.fctbs = pt.tx[slot].fctbs();
  fc.fccl = rx.Fccl();
  SimTime end = now() + pt.link.rate.SerializationTime(wire::kFlowControlPacketBytes);
  pt.tx_free_at = end;
  ++pt.stats.tx_fc_packets;
  Post(pt.link.peer_lp, end + pt.link.latency + pt.link.fc_latency, engine::kFlowControlArrive,
       pt.link.peer_port, static_cast<uint32_t>(vl | cls << 8),
       uint64_t{fc.fctbs} | uint64_t{fc.fccl} << 32);
  // Whatever arrives for the port meanwhile finds the link busy and asks for this wake itself.
  if (pt.fc_pending != 0 || HasWaiting(p)) WakeAt(p, end);
}

bool Device::SendPendingFlowControl(int p) {
  link::Port& pt = ports_[p];
  if (pt.fc_pending == 0 || pt.tx_free_at > now() || pt.fc_not_before > now()) return false;
  for (int s = 0; s < static_cast<int>(pt.rx.size()); ++s)
    if (pt.rx[s].fc_pending) {
      SendFlowControl(p, s);
      return true;
    }
  return false;
}

void Device::OnFlowControl(const Event& e) {
  link::Port& pt = ports_[e.port];
  int vl = e.a & 0xFF, cls = static_cast<int>(e.a >> 8);
  int slot = pt.Slot(vl, cls);
  ++pt.stats.rx_fc_packets;
  uint16_t fctbs = static_cast<uint16_t>(e.b & 0xFFF);
  uint16_t fccl = static_cast<uint16_t>((e.b >> 32) & 0xFFF);
  // IBA 7.9.4.2 resynchronises ABR to the peer's FCTBS. The link is FIFO and lossless, so every
  // block the peer counted has already arrived and the two agree; a mismatch is a model bug.
  // Only when every packet sent before this FC packet has been handled here, which holds unless
  // this device handles arrivals later than credits (rx_delay > fc_latency).
  link::RxCredits& rx = pt.rx[slot];
  if (pt.link.fc_latency >= rx_delay_ && (rx.abr & wire::kFcCounterMask) != fctbs)
    ++pt.stats.credit_violations;
  pt.tx[slot].fccl = fccl;
  Arbitrate(e.port);
}

void Device::ChangePortState(int p, uint8_t state, uint8_t phys) {
  Port& pt = ports_[p];
  if (p == 0) {  // a switch's management port has no link
    if (state != 0) pt.port_state = state == 1 ? 4 : state;
    return;
  }
  bool enabled_before = pt.phys_state != 3;
  if (phys == 3 && enabled_before) {
    SetLink(p, false);  // while still LinkUp, so this end sees the change too (trap, discards)
    pt.phys_state = 3;  // Disabled: the link stays down until Polling is written
    TellPeer(p, false);
  } else if (phys == 2 && !enabled_before) {
    pt.phys_state = 2;  // Polling: the port trains again if the peer is enabled
    TellPeer(p, false);
    if (ports_[p].link.connected && peer_enabled_[p]) SetLink(p, true);
  }
  if (state == 1) {
    // PortState Down on a live link: the link retrains and both ends come back in Init.
    if (link_up(p)) {
      ++pt.stats.link_downed;
      pt.port_state = 2;
      TellPeer(p, true);
      OnLinkChanged(p, true);
    }
  } else if (state == 3 || state == 4) {
    if (link_up(p)) pt.port_state = state;
    if (state == 4) Arbitrate(p);
  }
}

void Device::TellPeer(int p, bool retrain) {
  const link::LinkEnd& l = ports_[p].link;
  if (!l.connected) return;
  uint32_t a = (ports_[p].phys_state != 3 ? 1u : 0u) | (retrain ? 2u : 0u);
  Post(l.peer_lp, now() + l.latency + l.peer_rx_delay, engine::kLinkStateArrive, l.peer_port, a);
}

void Device::OnPeerLinkState(int p, bool peer_enabled, bool retrain) {
  peer_enabled_[p] = peer_enabled;
  Port& pt = ports_[p];
  bool self_enabled = pt.phys_state != 3;
  if (!peer_enabled) {
    SetLink(p, false);
  } else if (self_enabled && !link_up(p)) {
    SetLink(p, true);
  } else if (retrain && link_up(p)) {
    ++pt.stats.link_downed;
    pt.port_state = 2;
    OnLinkChanged(p, true);
  }
}

void Device::SetLink(int p, bool up) {
  Port& pt = ports_[p];
  bool was = link_up(p);
  if (up) {
    pt.phys_state = 5;                           // LinkUp
    pt.port_state = active_on_link_up_ ? 4 : 2;  // Init: the SM takes it from here
    if (!was) RestartFlowControl(p);
  } else {
    // Nothing waits for credits on a link that is down: its queues are discarded.
    for (int vl = 0; vl < kMaxVls; ++vl)
      if (pt.credit_stalled_vls >> vl & 1) SetStalled(p, vl, false);
    if (pt.phys_state == 5) pt.phys_state = 2;  // Polling, unless it was disabled
    pt.port_state = 1;
    if (was) ++pt.stats.link_downed;
  }
  if (was != up) OnLinkChanged(p, up);
}

// A link that trains again starts flow control from scratch at both ends (IBA 7.9.4): no
// credits until the peer's first FC packet, which each receive buffer sends at once.
//
// The end that trains first learns of the link before its peer does (the link-state message takes
// peer_rx_delay more than an FC packet's flight and fc_latency). An FC packet that overtook that
// message would be wiped by the peer's own restart, and a receive buffer with nothing to release
// sends no other: the peer would wait for credits forever. So the first FC packets leave no
// earlier than the peer is up to take them.
void Device::RestartFlowControl(int p) {
  link::Port& pt = ports_[p];
  SimTime first = std::max(now(), pt.tx_free_at);
  if (pt.link.peer_rx_delay > pt.link.fc_latency)
    first = std::max(first, now() + pt.link.peer_rx_delay - pt.link.fc_latency);
  pt.fc_not_before = first;
  for (link::TxCredits& t : pt.tx) t = link::TxCredits{};
  for (link::RxCredits& rx : pt.rx) {
    rx.abr = 0;
    if (!rx.fc_pending) {
      rx.fc_pending = true;
      ++pt.fc_pending;
    }
  }
  // As at bring-up (Start): one event, and the FC packets follow each other.
  if (!pt.rx.empty()) Post(id(), first, kFcSend, static_cast<uint16_t>(p), 0);
}

void Device::SendControl(int p, uint32_t a, uint64_t b) {
  if (!link_up(p)) return;
  const LinkEnd& l = ports_[p].link;
  Post(l.peer_lp, now() + l.latency + l.peer_rx_delay, engine::kControlArrive, l.peer_port, a, b);
}

void Device::SendSideBand(const FabricContext& ctx, uint32_t a, uint64_t b) {
  if (ctx.side_band_lp < 0) return;
  Post(static_cast<engine::LpId>(ctx.side_band_lp), now() + ctx.side_band_latency,
       engine::kSideBandArrive, 0, a, b);
}

void Device::WakeAt(int p, SimTime t) {
  link::Port& pt = ports_[p];
  if (WakeCovered(p, t)) return;  // an earlier wake will look again
  pt.wake_at = t;
  Post(id(), t, kWake, static_cast<uint16_t>(p));
}

void Device::WakeAfterVl15(int p, SimTime end) {
  Port& pt = ports_[p];
  if (unconditional_vl15_wake_ || pt.fc_pending != 0 || HasWaiting(p)) {
    WakeAt(p, end);
    return;
  }
  if (WakeCovered(p, end)) return;
  // The wake-up WakeAt would post now: its number now keeps its place among this device's events
  // of `end`, should it be needed after all.
  reserved_wakes_.push_back({p, end, ReserveSeq()});
  HeldWakesChanged();
}

template <typename Pred>
void Device::DropWakes(Pred ran) {
  // Earliest first, in the order of events (time, then number: all are this device's own), so
  // that each is folded into the digest where it would have been handled.
  for (;;) {
    size_t first = reserved_wakes_.size();
    for (size_t i = 0; i < reserved_wakes_.size(); ++i) {
      const ReservedWake& w = reserved_wakes_[i];
      if (!ran(w)) continue;
      if (first == reserved_wakes_.size() || w.at < reserved_wakes_[first].at ||
          (w.at == reserved_wakes_[first].at && w.seq < reserved_wakes_[first].seq))
        first = i;
    }
    if (first == reserved_wakes_.size()) return;
    ReservedWake w = reserved_wakes_[first];
    reserved_wakes_.erase(reserved_wakes_.begin() + static_cast<std::ptrdiff_t>(first));
    HeldWakesChanged();
    // It ran and found nothing, and the kWake cleared the wake-up it had set.
    ports_[w.port].wake_at = -1;
    ++held_counts_.dropped;
    Event e;
    e.time = w.at;
    e.src = e.lp = id();
    e.seq = w.seq;
    e.kind = kWake;
    e.port = static_cast<uint16_t>(w.port);
    Fold(e);
  }
}

void Device::PostReservedWake(int p, bool after_event) {
  for (size_t i = 0; i < reserved_wakes_.size(); ++i) {
    if (reserved_wakes_[i].port != p) continue;
    ReservedWake w = reserved_wakes_[i];
    if (w.at < now()) {
      // Only between events (the clock moved to the end of a run): it would have run, and found
      // nothing, as nothing has happened at the device since its last event; so would every
      // other held back before now, in order.
      DropWakes([&](const ReservedWake& x) { return x.at < now(); });
      return;
    }
    reserved_wakes_.erase(reserved_wakes_.begin() + static_cast<std::ptrdiff_t>(i));
    HeldWakesChanged();
    // As WakeAt would have left it at the transmit: every read or change of wake_at since came
    // through here.
    ports_[p].wake_at = w.at;
    PostReservedToSelf(w.seq, w.at, kWake, static_cast<uint16_t>(p));
    ++(after_event ? held_counts_.posted_after_event : held_counts_.posted_when_asked);
    return;
  }
}

void Device::BeforeEvent(const Event& e) {
  // The order of events (engine::EventBefore): time, then target and source, then number.
  DropWakes([&](const ReservedWake& w) {
    if (w.at != e.time) return w.at < e.time;
    if (e.src != id()) return id() < e.src;
    return w.seq < e.seq;
  });
}

void Device::AfterEvent() {
  for (size_t i = 0; i < reserved_wakes_.size();) {
    const ReservedWake& w = reserved_wakes_[i];
    const Port& pt = ports_[w.port];
    // What Arbitrate would act on when it runs at w.at; with none of it, it returns having done
    // nothing. Anything else (a transmit, a change of link) and the wake-up is posted as it was.
    if (pt.tx_free_at == w.at && pt.fc_pending == 0 && link_up(w.port) && !HasWaiting(w.port)) {
      ++i;
      continue;
    }
    PostReservedWake(w.port, true);  // erases entry i
  }
}

void Device::ChangeStalled(int p, int vl, bool stalled) {
  Port& pt = ports_[p];
  uint32_t bit = 1u << vl;
  AccountXmitWait(pt);
  pt.credit_stalled_vls ^= bit;
  if (!pt.stats.credit_stalled.empty()) pt.stats.credit_stalled[vl].Set(now(), stalled ? 1 : 0);
}

namespace {

// Whole ticks of the grid k * tick inside [from, to).
uint64_t WholeTicks(SimTime from, SimTime to, SimTime tick) {
  SimTime first = (from + tick - 1) / tick, last = to / tick;
  return last > first ? static_cast<uint64_t>(last - first) : 0;
}

SimTime XmitWaitTick(const Port& pt) {
  return std::max<SimTime>(1,
                           pt.link.rate.SerializationTime(int64_t{Device::kXmitWaitTickSymbols} *
                                                          static_cast<int>(pt.link.rate.width())));
}

// One step of the PortXmitWait accounting over [w.mark, t), during which the stall state and the
// data-busy time did not change: a run open at `mark` goes on if the port still waits from that
// instant, and otherwise ends there; a wait that starts in the window opens a run.
void StepXmitWait(const Port& pt, XmitWaitRun& w, SimTime t, uint64_t* ticks) {
  SimTime from = std::max(w.mark, pt.data_busy_until);
  bool waits = pt.credit_stalled_vls != 0 && from < t;
  if (w.start >= 0 && !(waits && from == w.mark)) {
    *ticks += WholeTicks(w.start, w.mark, XmitWaitTick(pt));
    w.start = -1;
  }
  if (waits && w.start < 0) w.start = from;
  w.mark = t;
}

}  // namespace

void Device::AccountXmitWait(Port& pt) {
  StepXmitWait(pt, pt.xmit_wait_run, now(), &pt.stats.xmit_wait);
}

uint64_t Device::XmitWait(int p) const {
  const Port& pt = ports_[p];
  XmitWaitRun w = pt.xmit_wait_run;  // a copy: reading the counter changes nothing
  uint64_t ticks = pt.stats.xmit_wait;
  StepXmitWait(pt, w, now(), &ticks);
  if (w.start >= 0) ticks += WholeTicks(w.start, now(), XmitWaitTick(pt));
  return ticks;
}

void Device::FinishStats(SimTime end) {
  // The run handled its events before the clock, which may be past `end` (`ibemu up` runs on
  // after its results span): the wake-ups held back and due before it are its last.
  DropWakes([&](const ReservedWake& w) { return w.at < now(); });
  for (link::Port& pt : ports_) {
    for (auto& b : pt.stats.rx_occupancy) b.Advance(end);
    for (auto& b : pt.stats.credit_stalled) b.Advance(end);
  }
}

}  // namespace ibemu::link
