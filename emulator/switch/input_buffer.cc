// The input buffer (docs/blocks/input_buffer.md): queues per input port and VL, the per-Port-VL
// counts of queued and arrived blocks the CC hooks read, heads offered to the crossbar, and the
// discards when an output's link goes down.

#include "emulator/switch/switch.h"

namespace ibemu::sw {

void Switch::Enqueue(int in, int in_vl, int out, int out_vl, SimTime ready_at, Packet* pkt) {
  pkt->out_port = static_cast<uint16_t>(out);
  pkt->out_vl = static_cast<uint8_t>(out_vl);
  pkt->ready_at = ready_at;
  // The same class on both links, unless the queuing policy looks ahead (the next switch's queue).
  pkt->out_class =
      ctx_->next_output.empty()
          ? pkt->credit_class
          : static_cast<uint16_t>(ctx_->CreditClassTo(ports_[out].link.peer_lp, pkt->lrh().dlid()));
  int dest = ctx_->DestIndex(pkt->lrh().dlid());
  int qi = ctx_->queuing->Queue(*pkt, out, dest < 0 ? 0 : dest);
  if (cc_hooks_) qi = cc_hooks_->Queue(*this, in, in_vl, out, out_vl, *pkt, qi);
  pkt->queue = static_cast<uint16_t>(qi);
  Queue& q = QueueAt(in, in_vl, qi);
  bool was_empty = q.q.empty();
  q.q.Push(pkt);
  CountQueued(in, *pkt, true);
  if (cc_hooks_) cc_hooks_->OnEnqueue(*this, in, in_vl, out, out_vl, *pkt);
  if (was_empty) HeadChanged(&q);
}

void Switch::CountQueued(int in, const Packet& p, bool add) {
  Output& o = outputs_[p.out_port];
  uint32_t b = p.blocks();
  uint32_t& from = QueuedFrom(p.out_port, p.out_vl, in);
  Input& input = inputs_[in];
  // ArrivingFrom(out) follows Input::arriving, so ArrivedBlocks looks only at the inputs
  // that may still be receiving a packet for the output, not at all of them.
  auto mark = [&](int out, bool on) {
    uint64_t& w = ArrivingFrom(out)[in / 64];
    uint64_t bit = uint64_t{1} << (in % 64);
    w = on ? w | bit : w & ~bit;
  };
  if (add) {
    if (input.arriving) mark(input.arriving_out, false);
    mark(p.out_port, true);
    input.arriving = &p;
    input.arriving_tail = p.tail_arrival;
    input.arriving_out = p.out_port;
    input.arriving_vl = p.out_vl;
    input.arriving_blocks = b;
  } else if (input.arriving == &p) {
    mark(input.arriving_out, false);
    input.arriving = nullptr;
  }
  if (add) {
    o.per_vl[p.out_vl].queued_blocks += b;
    if (from == 0) ++o.per_vl[p.out_vl].contributors;
    from += b;
  } else {
    o.per_vl[p.out_vl].queued_blocks -= b;
    from -= b;
    if (from == 0) --o.per_vl[p.out_vl].contributors;
  }
}

uint32_t Switch::ArrivedBlocksFrom(int in, int out, int vl) const {
  const Input& i = inputs_[in];
  uint32_t q = QueuedFrom(out, vl, in);
  bool arriving =
      i.arriving && i.arriving_tail > now() && i.arriving_out == out && i.arriving_vl == vl;
  return arriving ? q - i.arriving_blocks : q;
}

uint32_t Switch::ArrivedBlocks(int out, int vl) const {
  const Output& o = outputs_[out];
  uint32_t q = o.per_vl[vl].queued_blocks;
  const uint64_t* arriving = ArrivingFrom(out);
  for (size_t w = 0; w < mask_words_; ++w)
    for (uint64_t bits = arriving[w]; bits; bits &= bits - 1) {
      size_t in = w * 64 + static_cast<size_t>(__builtin_ctzll(bits));
      const Input& i = inputs_[in];
      if (i.arriving_tail > now() && i.arriving_vl == vl &&
          QueuedFrom(out, vl, static_cast<int>(in)) != 0)
        q -= i.arriving_blocks;
    }
  return q;
}

void Switch::HeadChanged(Queue* q) {
  while (!q->q.empty() && !link_up(q->q.head->out_port)) DiscardHead(q);
  while (cc_checks_heads_ && !q->q.empty()) {
    int to = cc_hooks_->HeadQueue(*this, q->in, q->vl, static_cast<int>(q->index), *q->q.head);
    if (to == static_cast<int>(q->index)) break;
    // Post-processing: the head changes queue, not place in the buffer.
    Packet* pkt = q->q.Pop();
    pkt->queue = static_cast<uint16_t>(to);
    Queue& dst = QueueAt(q->in, q->vl, to);
    bool was_empty = dst.q.empty();
    dst.q.Push(pkt);
    if (was_empty) HeadChanged(&dst);
  }
  if (q->q.empty()) return;
  Packet* h = q->q.head;
  // A head whose output's link is busy past its ready time, with the wake-up for the link's end
  // already due, registers now: no arbitration of that output looks at requests before the link
  // frees, and registering at the ready time would post nothing (that wake-up serves), so the
  // request is seen exactly as if it had registered then, and the head-ready event (a third of
  // one a packet-hop, half of them in this case) is not needed. Only where one queue of an input
  // requests an output at a time, as an input's requests for an output are kept in the order
  // they registered in.
  const link::Port& to = ports_[h->out_port];
  if (h->ready_at <= now() ||
      (early_register_ && to.tx_free_at > h->ready_at && WakeCovered(h->out_port, to.tx_free_at))) {
    Register(q);
  } else {
    Post(id(), h->ready_at, kHeadReady, q->in, q->vl, q->index);
  }
}

void Switch::Register(Queue* q) {
  Packet* h = q->q.head;
  q->head_bytes = h->wire_bytes();
  q->head_class = h->out_class;
  q->head_slack = FeedSlack(q->in, h->out_port, q->head_bytes);
  Output& o = outputs_[h->out_port];
  ReqList& r = Req(h->out_port, h->out_vl, q->in);
  q->next_req = nullptr;
  q->registered = true;
  if (!r.first) {
    SetFirst(r, q);
  } else {
    Queue* last = r.first;
    while (last->next_req) last = last->next_req;
    last->next_req = q;
  }
  ++o.per_vl[h->out_vl].pending;
  ReqMask(h->out_port, h->out_vl)[q->in / 64] |= uint64_t{1} << (q->in % 64);
  if (ReqTo(q->in, h->out_port)++ == 0)
    ReqToMask(q->in)[h->out_port / 64] |= uint64_t{1} << (h->out_port % 64);
  Arbitrate(h->out_port);
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
  DiscardOutputBuffer(out);
  Output& o = outputs_[out];
  for (int vl = 0; vl < cfg_.data_vls; ++vl) {
    for (int in = 0; in <= num_ports(); ++in) {
      ReqList& r = Req(out, vl, in);
      while (Queue* q = r.first) {
        SetFirst(r, q->next_req);
        q->next_req = nullptr;
        q->registered = false;
        --o.per_vl[vl].pending;
        if (--ReqTo(in, out) == 0) ReqToMask(in)[out / 64] &= ~(uint64_t{1} << (out % 64));
        // Discards the heads bound for `out` and requeues the rest; a head registered ahead of its
        // ready time (HeadChanged) is discarded at that time, as if it had not registered yet.
        if (q->q.head->ready_at > now())
          Post(id(), q->q.head->ready_at, kHeadReady, q->in, q->vl, q->index);
        else
          HeadChanged(q);
      }
    }
    std::fill(ReqMask(out, vl), ReqMask(out, vl) + mask_words_, 0);
  }
}

}  // namespace ibemu::sw
