#include "emulator/cc/fbicm/cfq_isolation.h"

#include "common/wire/lrh.h"

namespace ibemu::cc::fbicm {

namespace {
uint16_t Dlid(const Packet& p) {
  return const_cast<Packet&>(p).lrh().dlid();
}
}  // namespace

int CfqIsolation::NumQueues(int base) const {
  base_ = base;
  return base + opt_.cfqs;
}

void CfqIsolation::Size(const SwitchView& s) {
  if (vls_) return;
  ports_ = s.NumPorts() + 1;
  vls_ = s.DataVls();
  lines_.assign(static_cast<size_t>(ports_ * vls_ * opt_.cfqs), Line{});
  out_lines_.assign(static_cast<size_t>(ports_ * vls_), {});
  congested_.assign(static_cast<size_t>(ports_ * vls_), 0);
  if (opt_.voq_roots) roots_.assign(static_cast<size_t>(ports_ * vls_ * base_), Root{});
}

void CfqIsolation::RootEnqueue(SwitchView& s, int in, int in_vl, int q, int out, int out_vl) {
  Root& r = RootAt(in, in_vl, q);
  if (r.above || s.QueueBlocks(in, in_vl, q) < opt_.high_blocks) return;
  r.above = true;
  r.out = static_cast<uint16_t>(out);
  r.out_vl = static_cast<uint8_t>(out_vl);
  ++congested_[out * vls_ + out_vl];
  // No HPQ at the root: the VOQ isolates its output's flows already (L6597-L6604). The flow at
  // its head is the tree's; the upstream device isolates it (L6591-L6596).
  if (r.told || in == 0) return;
  r.dlid = Dlid(*s.QueueHead(in, in_vl, q));
  r.told = true;
  Tell(s, in, in_vl, kAllocate, r.dlid);
}

void CfqIsolation::RootDequeue(SwitchView& s, int in, int in_vl, int q) {
  Root& r = RootAt(in, in_vl, q);
  if (r.above && s.QueueBlocks(in, in_vl, q) <= opt_.low_blocks) {
    r.above = false;
    --congested_[r.out * vls_ + r.out_vl];
  }
  if (r.told && s.QueuePackets(in, in_vl, q) == 0) {
    r.told = false;
    if (!Told(in, in_vl, r.dlid)) Tell(s, in, in_vl, kRelease, r.dlid);
  }
}

int CfqIsolation::Find(int in, int vl, uint16_t dlid) const {
  for (int c = 0; c < opt_.cfqs; ++c) {
    const Line* l = LineAt(in, vl, c);
    if (l->valid && !l->closing && l->dlid == dlid) return c;
  }
  return -1;
}

bool CfqIsolation::Told(int in, int vl, uint16_t dlid) const {
  for (int c = 0; c < opt_.cfqs; ++c) {
    const Line* l = LineAt(in, vl, c);
    if (l->valid && l->told && l->dlid == dlid) return true;
  }
  if (opt_.voq_roots)
    for (int q = 0; q < base_; ++q) {
      const Root& r = roots_[(in * vls_ + vl) * base_ + q];
      if (r.told && r.dlid == dlid) return true;
    }
  return false;
}

int CfqIsolation::FindClosing(int in, int vl, uint16_t dlid) const {
  for (int c = 0; c < opt_.cfqs; ++c) {
    const Line* l = LineAt(in, vl, c);
    if (l->valid && l->closing && l->dlid == dlid) return c;
  }
  return -1;
}

const CfqIsolation::OutLine* CfqIsolation::FindOut(int out, int vl, uint16_t dlid) const {
  for (const OutLine& l : OutLines(out, vl))
    if (l.dlid == dlid) return &l;
  return nullptr;
}

int CfqIsolation::Allocate(int in, int vl, uint16_t dlid, int out, bool root) {
  for (int c = 0; c < opt_.cfqs; ++c) {
    Line* l = LineAt(in, vl, c);
    if (l->valid) continue;
    *l = Line{};
    l->valid = true;
    l->root = root;
    l->dlid = dlid;
    l->out = static_cast<uint16_t>(out);
    return c;
  }
  return -1;  // out of CFQs: the flow stays in the normal queue (HoL blocking returns)
}

int CfqIsolation::Queue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p,
                        int chosen) {
  Size(s);
  uint16_t dlid = Dlid(p);
  int c = Find(in, in_vl, dlid);
  // A packet for a destination the next device isolates takes a CFQ here too: the tree's
  // branch is isolated hop by hop toward its sources (L5522-L5528).
  if (c < 0 && FindOut(out, out_vl, dlid)) {
    // A line still closing for this destination is isolating it again: one line per flow at
    // an input, since its upstream keeps one line for both (a second line's release would
    // drop the upstream's line, and with it the Stop that bounds this one).
    c = FindClosing(in, in_vl, dlid);
    if (c >= 0)
      LineAt(in, in_vl, c)->closing = false;
    else
      c = Allocate(in, in_vl, dlid, out, false);
  }
  return c < 0 ? chosen : base_ + c;
}

int CfqIsolation::HeadQueue(SwitchView&, int in, int vl, int q, const Packet& head) {
  if (q >= base_) return q;
  // Post-processing (L5787-L5789): a normal queue's head whose destination a CFQ isolates
  // moves there, so the normal queue holds no congested packet at its head.
  int c = Find(in, vl, Dlid(head));
  return c < 0 ? q : base_ + c;
}

void CfqIsolation::Tell(SwitchView& s, int in, int vl, Control kind, uint16_t dlid) {
  s.SendControl(in, static_cast<uint32_t>(kind) | static_cast<uint32_t>(vl) << 8, dlid);
}

void CfqIsolation::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {
  int q = p.queue;
  if (q < base_ && opt_.voq_roots) return RootEnqueue(s, in, in_vl, q, out, out_vl);
  if (q < base_) {
    // Detection (L5780-L5786): the normal queue is above the threshold; its head is the packet
    // that waits, and its destination the congested flow.
    if (s.QueueBlocks(in, in_vl, q) <= opt_.detect_blocks) return;
    const Packet* head = s.QueueHead(in, in_vl, q);
    uint16_t dlid = Dlid(*head);
    if (Find(in, in_vl, dlid) < 0) Allocate(in, in_vl, dlid, head->out_port, true);
    return;
  }
  Line* l = LineAt(in, in_vl, q - base_);
  uint32_t blocks = s.QueueBlocks(in, in_vl, q);
  if (opt_.voq_roots) {
    // An HPQ at or above high: the first time allocates upstream; a packet arriving above high
    // after that stops the upstream HPQ ("the second time the HTh threshold is reached and
    // further ones", L6643-L6648), until the HPQ is down to low.
    if (blocks < opt_.high_blocks || in == 0 || l->stop_sent) return;
    Tell(s, in, in_vl, l->told ? kStop : kAllocate, l->dlid);
    l->stop_sent = l->told;
    l->told = true;
    return;
  }
  if (!l->stop_sent && blocks >= opt_.stop_blocks && in != 0) {
    Tell(s, in, in_vl, kStop, l->dlid);
    l->stop_sent = l->told = true;
  }
  if (opt_.throttle && l->root && !l->above_high && blocks >= opt_.high_blocks) {
    l->above_high = true;
    ++congested_[out * vls_ + out_vl];
  }
}

void CfqIsolation::OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl,
                             const Packet& p) {
  int q = p.queue;
  if (q < base_ && opt_.voq_roots) return RootDequeue(s, in, in_vl, q);
  if (q < base_) return;
  int c = q - base_;
  Line* l = LineAt(in, in_vl, c);
  if (!l->valid) return;
  uint32_t blocks = s.QueueBlocks(in, in_vl, q);
  if (opt_.voq_roots) {
    if (l->stop_sent && blocks <= opt_.low_blocks) {
      Tell(s, in, in_vl, kGo, l->dlid);
      l->stop_sent = false;
    }
    // Released when empty (L6649-L6656), in Go status as CCFIT's.
    if (s.QueuePackets(in, in_vl, q) == 0 && !l->stop_sent) Release(s, in, in_vl, c);
    return;
  }
  if (l->stop_sent && blocks <= opt_.go_blocks) {
    Tell(s, in, in_vl, kGo, l->dlid);
    l->stop_sent = false;
  }
  if (l->above_high && blocks <= opt_.low_blocks) {
    l->above_high = false;
    --congested_[out * vls_ + out_vl];
  }
  // Deallocation (L5823-L5831): empty and in Go status.
  if (s.QueuePackets(in, in_vl, q) == 0 && !l->stop_sent) Release(s, in, in_vl, c);
}

void CfqIsolation::Release(SwitchView& s, int in, int vl, int c) {
  Line* l = LineAt(in, vl, c);
  if (l->above_high && !opt_.voq_roots) --congested_[l->out * vls_ + vl];
  bool told = l->told;
  uint16_t dlid = l->dlid;
  *l = Line{};
  if (told && !Told(in, vl, dlid)) Tell(s, in, vl, kRelease, dlid);
}

int CfqIsolation::PickQueue(const SwitchView&, int in, int out, int vl, const int* queues,
                            int n) const {
  // The oldest request goes unless it is a CFQ the downstream device has stopped (CFQ Stop/Go,
  // L5816-L5822); the normal queue is never stopped. Queues of input VL vl (SL2VL identity).
  for (int i = 0; i < n; ++i) {
    if (queues[i] < base_) return i;
    const Line* l = LineAt(in, vl, queues[i] - base_);
    const OutLine* o = FindOut(out, vl, l->dlid);
    if (!o || !o->stopped) return i;
  }
  return -1;
}

void CfqIsolation::OnControl(SwitchView& s, int port, uint32_t a, uint64_t b) {
  Size(s);
  int vl = static_cast<int>(a >> 8);
  uint16_t dlid = static_cast<uint16_t>(b);
  if (vl >= vls_) return;
  std::vector<OutLine>& lines = OutLines(port, vl);
  auto it = lines.begin();
  while (it != lines.end() && it->dlid != dlid) ++it;
  switch (a & 0xFF) {
    case kAllocate:
      if (it == lines.end() && static_cast<int>(lines.size()) < opt_.out_lines)
        lines.push_back({dlid, false});
      return;
    case kStop:
      if (it == lines.end()) {
        if (static_cast<int>(lines.size()) >= opt_.out_lines) return;  // no line left
        lines.push_back({dlid, true});
      } else {
        it->stopped = true;
      }
      return;
    case kGo:
      if (it == lines.end()) return;
      it->stopped = false;
      s.Kick(port);
      return;
    case kRelease:
      if (it != lines.end()) lines.erase(it);
      // The lines this output's line fed take no new packets and go once empty.
      for (int in = 0; in < ports_; ++in)
        for (int c = 0; c < opt_.cfqs; ++c) {
          Line* l = LineAt(in, vl, c);
          if (!l->valid || l->root || l->dlid != dlid || l->out != port) continue;
          l->closing = true;
          if (s.QueuePackets(in, vl, base_ + c) == 0) Release(s, in, vl, c);
        }
      s.Kick(port);
      return;
  }
}

void CfqIsolation::OnTransmit(SwitchView& s, int, int out, int vl, Packet* p) {
  if (!opt_.throttle || congested_[out * vls_ + vl] == 0 || p->payload_len == 0) return;
  if (opt_.root_credit_test && s.CreditStarved(out, vl)) return;  // a victim, not the root
  if (p->blocks() < opt_.packet_size_blocks) return;
  if (std::uniform_real_distribution<double>(0, 1)(rng_) >= opt_.marking_rate) return;
  p->bth().set_fecn(true);
}

}  // namespace ibemu::cc::fbicm
