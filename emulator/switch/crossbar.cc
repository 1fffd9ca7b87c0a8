// VL arbitration and the crossbar (docs/blocks/vl_arbiter.md, crossbar.md): which head an output
// takes next, from which input and queue, when the link, the credits and the input's read
// bandwidth allow it.

#include <algorithm>

#include "emulator/mgmt/sma.h"
#include "emulator/switch/switch.h"

namespace ibemu::sw {

// With per-destination classes (VOQnet) a queue whose destination is out of credits must not hold
// back the others behind it.
Switch::Queue* Switch::ServableAmong(int out, int vl, int in) const {
  const ReqList& r = Req(out, vl, in);
  if (!r.first) return nullptr;
  if (xbar_picks_queues_) return PickedQueue(out, vl, in);
  const link::Port& pt = ports_[out];
  for (Queue* q = r.first; q; q = q->next_req) {
    if (!InputCanFeed(*q)) {
      if (cfg_.read_port_per_queue) continue;  // another queue's read port may be free
      return nullptr;
    }
    if (HeldForOldest(in, q)) return nullptr;
    if (RoomAt(out, vl, *q)) return q;
    // An output buffer has a queue and room per credit class too.
    if (pt.classes == 1) return nullptr;
  }
  return nullptr;
}

// Packets reach an input VL one after another on its link, so the earliest tail is the oldest.
const Packet* Switch::OldestAt(int in, int vl) const {
  const Packet* oldest = nullptr;
  const Queue* qs = QueuesOf(in, vl);
  for (int k = 0; k < queues_per_vl_; ++k) {
    const Packet* h = qs[k].q.head;
    if (h && (!oldest || h->tail_arrival < oldest->tail_arrival)) oldest = h;
  }
  return oldest;
}

bool Switch::CanGo(int out, int vl, int in, const Queue* q) const {
  return InputCanFeed(*q) && !HeldForOldest(in, q) && RoomAt(out, vl, *q);
}

// H6: every queue of the input that requests (out, vl) and could go now is a candidate; the
// mechanism picks one.
Switch::Queue* Switch::PickedQueue(int out, int vl, int in) const {
  pick_queues_.clear();
  pick_ptrs_.clear();
  for (Queue* q = Req(out, vl, in).first; q; q = q->next_req)
    if (CanGo(out, vl, in, q)) {
      pick_queues_.push_back(static_cast<int>(q->index));
      pick_ptrs_.push_back(q);
    }
  if (pick_ptrs_.empty()) return nullptr;
  int k = cc_hooks_->PickQueue(*this, in, out, vl, pick_queues_.data(),
                               static_cast<int>(pick_queues_.size()));
  if (k < 0) return nullptr;  // the mechanism holds them all
  return pick_ptrs_[static_cast<size_t>(
      std::clamp<int>(k, 0, static_cast<int>(pick_ptrs_.size()) - 1))];
}

void Switch::TakeRequest(int out, int vl, int in, Queue* q) {
  Output& o = outputs_[out];
  ReqList& r = Req(out, vl, in);
  Queue* prev = nullptr;
  for (Queue* x = r.first; x != q; x = x->next_req) prev = x;
  if (prev)
    prev->next_req = q->next_req;
  else
    SetFirst(r, q->next_req);
  if (!r.first) ReqMask(out, vl)[in / 64] &= ~(uint64_t{1} << (in % 64));
  q->next_req = nullptr;
  if (--ReqTo(in, out) == 0) ReqToMask(in)[out / 64] &= ~(uint64_t{1} << (out % 64));
  q->registered = false;
  --o.per_vl[vl].pending;
  if (cfg_.bypass_limit > 0) {
    uint32_t& bypassed = inputs_[in].bypassed[q->vl];
    bypassed = q->q.head == OldestAt(in, q->vl) ? 0 : bypassed + 1;
  }
}

Packet* Switch::ReadFromInput(int out, int vl, int in, Queue* q, SimTime* read_end,
                              DeferredRelease* deferred) {
  Packet* pkt = q->q.Pop();
  int in_vl = q->vl;
  int cls = pkt->credit_class;
  pkt->credit_class = pkt->out_class;  // from here on the packet is the output link's
  uint32_t blocks = pkt->blocks();
  // The crossbar reads the packet out of the input buffer with the input's bandwidth, and never
  // before its tail has arrived (cut-through); the buffer space is free once it is read.
  SimTime end = std::max(now(), ReadFreeAt(*q)) + ReadTime(in, pkt->wire_bytes());
  (cfg_.read_port_per_queue ? q->read_free_at : read_free_at_[in]) = end;
  SimTime release = std::max(end, pkt->tail_arrival);
  CountQueued(in, *pkt, false);
  if (cc_hooks_) {
    cc_hooks_->OnDequeue(*this, in, in_vl, out, vl, *pkt);
    release += cc_hooks_->CreditReturnDelay(*this, in, in_vl, out, vl, *pkt);
  }
  uint32_t a = static_cast<uint32_t>(in_vl | cls << 8);
  if (deferred) {
    deferred->time = release;
    deferred->seq = ReserveSeq();
    deferred->self_posts = self_posts();
    deferred->in = static_cast<uint16_t>(in);
    deferred->a = a;
    deferred->blocks = blocks;
  } else {
    Post(id(), release, kInputRelease, static_cast<uint16_t>(in), a, blocks);
  }
  *read_end = end;
  return pkt;
}

bool Switch::LinkTaken(int out) {
  link::Port& pt = ports_[out];
  if (pt.tx_free_at > now()) {
    WakeAt(out, pt.tx_free_at);
    return true;
  }
  if (SendPendingFlowControl(out)) return true;
  if (!vl15_[out].empty()) {
    // VL15 needs no credits and goes before every data VL (IBA 7.6.9).
    SimTime end = Transmit(out, vl15_[out].Pop(), policy::kVl15, 0, now());
    // On a fabric that carries only SMPs the wake-up at `end` found nothing at every hop.
    WakeAfterVl15(out, end);
    return true;
  }
  return false;
}

void Switch::Arbitrate(int out) {
  if (Cioq()) {
    ArbitrateCioq(out);
    return;
  }
  link::Port& pt = ports_[out];
  if (!link_up(out) || LinkTaken(out)) return;
  Output& o = outputs_[out];
  int n = num_ports() + 1;
  size_t words = mask_words_;
  // Each requesting input is asked once per VL whether it can go now: the answers (a mask and
  // the queue) serve the VL arbiter, the input arbiter and the transfer.
  if (servable_queue_.size() < static_cast<size_t>(pt.data_vls) * n) {
    servable_mask_.resize(static_cast<size_t>(pt.data_vls) * words);
    servable_queue_.resize(static_cast<size_t>(pt.data_vls) * n);
  }
  uint32_t eligible = 0;
  for (int vl = 0; vl < pt.data_vls; ++vl) {
    if (o.per_vl[vl].pending == 0) continue;
    // Credits count as what blocks the VL only for the inputs before the first that can go.
    bool credit_blocked = false;
    const uint64_t* mask = ReqMask(out, vl);
    uint64_t* can = &servable_mask_[static_cast<size_t>(vl) * words];
    for (size_t w = 0; w < words; ++w) {
      can[w] = 0;
      for (uint64_t bits = mask[w]; bits; bits &= bits - 1) {
        int in = static_cast<int>(w * 64) + __builtin_ctzll(bits);
        if (Queue* q = Servable(out, vl, in)) {
          can[w] |= uint64_t{1} << (in % 64);
          servable_queue_[static_cast<size_t>(vl) * n + in] = q;
          eligible |= 1u << vl;
          continue;
        }
        if (eligible >> vl & 1) continue;
        const ReqList& r = Req(out, vl, in);
        if (!pt.tx[pt.Slot(vl, r.first_class)].Fits(r.first_blocks)) {
          credit_blocked = true;
        }
      }
    }
    if (credit_blocked) o.starved_vls |= 1u << vl;
    SetStalled(out, vl, !(eligible >> vl & 1) && credit_blocked);
  }
  if (!eligible) return;
  int vl = ChooseVl(o, eligible);
  if (vl < 0) return;
  const uint64_t* can = &servable_mask_[static_cast<size_t>(vl) * words];
  auto servable = [&](int i) { return (can[i / 64] >> (i % 64) & 1) != 0; };
  int in = o.xbar->Pick(vl, n, can, servable);
  if (in < 0) return;  // input 0 is the management port

  Queue* q = servable_queue_[static_cast<size_t>(vl) * n + in];
  TakeRequest(out, vl, in, q);
  SimTime read_end;
  DeferredRelease release;
  Packet* pkt = ReadFromInput(out, vl, in, q, &read_end, &release);
  SimTime end = SendToOutput(out, in, vl, pkt, std::max(pkt->tail_arrival, read_end));
  // Look again when the link frees only if something else is waiting; a request that registers
  // later wakes the output itself. When the input's release falls at that instant (cut-through
  // between links of one speed, no credit-return delay) and nothing was posted to this switch
  // in between, one event does both, in the order two would have run: the release holds the
  // place its own event would have had, and nothing could come between it and the wake.
  bool wake = Requested(out);
  if (wake && release.time == end && !WakeCovered(out, end) && self_posts() == release.self_posts) {
    ports_[out].wake_at = end;
    PostReserved(release.seq, id(), end, kInputReleaseAndWake, release.in, release.a,
                 release.blocks | uint64_t{static_cast<uint32_t>(out)} << 32);
  } else {
    PostRelease(release);
    if (wake) WakeAt(out, end);
  }
  if (!q->q.empty()) HeadChanged(q);
}

void Switch::VlArbChanged(int port) {
  if (port < 1 || port > num_ports()) return;
  SetVlArbiter(port, policy::VlArbiterRegistry::Get().Make(
                         cfg_.vlarb,
                         mgmt::VlArbConfigOf(port_mgmt_[port], cfg_.vlarb_config, cfg_.data_vls)));
}

}  // namespace ibemu::sw
