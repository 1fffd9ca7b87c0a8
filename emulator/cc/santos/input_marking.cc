#include "emulator/cc/santos/input_marking.h"

#include <algorithm>

namespace ibemu::cc::santos {

void InputMarking::Init(SwitchView& s) {
  vls_ = s.DataVls();
  size_t n = static_cast<size_t>(s.NumPorts() + 1) * vls_;
  resident_.resize(n);
  cnt1_.assign(n, 0);
  cnt2_.assign(n, 0);
}

// Full: past the configured fill, or (fill 0) without room for another packet as big as the one
// that arrived, the paper's buffer of four packets that cannot take a fifth. A buffer becomes
// full when an arrival makes it so: with fill 0 that is every arrival that leaves no room, as
// the buffer had room for the packet that came.
bool InputMarking::BecomesFull(SwitchView& s, uint32_t used, uint32_t arriving) const {
  uint32_t cap = s.VlCapacityBlocks();
  if (opt_.fill > 0) return used >= opt_.fill * cap && used - arriving < opt_.fill * cap;
  return used + arriving > cap;
}

void InputMarking::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {
  if (vls_ == 0) Init(s);
  size_t iv = PortVl(in, in_vl), ov = PortVl(out, out_vl);
  std::vector<Resident>& buf = resident_[iv];
  buf.push_back({p.id, static_cast<uint16_t>(out), static_cast<uint8_t>(out_vl), false});
  ++cnt1_[ov];
  if (opt_.trigger == Trigger::kOutput) {
    // A CIOQ switch's packets for the output are in its buffer too (filled first).
    uint32_t held = s.QueuedBlocks(out, out_vl) + s.OutputBufferBlocks(out, out_vl);
    if (BecomesFull(s, held, p.blocks())) cnt2_[ov] = cnt1_[ov];
    return;
  }
  if (!BecomesFull(s, s.InputUsedBlocks(in, in_vl), p.blocks())) return;
  if (opt_.trigger == Trigger::kNaive) {
    for (Resident& r : buf) r.marked = true;
  } else if (opt_.trigger == Trigger::kProposed) {
    // Overwritten, not added: cnt1 already counts the packets an earlier trigger named
    // [S:L111]. Outputs that several packets wait for get the same value again. A packet whose
    // tail is still arriving (the one that filled the buffer, cutting through to an idle output)
    // names no output: the paper's victim packets "cut through switch B and avoid an extended
    // stay in the input buffer" [S:L314].
    for (const Resident& r : buf)
      if (s.ArrivedBlocksFrom(in, r.out, r.vl) > 0)
        cnt2_[PortVl(r.out, r.vl)] = cnt1_[PortVl(r.out, r.vl)];
  }
}

void InputMarking::OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl,
                             const Packet& p) {
  if (vls_ == 0) Init(s);
  std::vector<Resident>& buf = resident_[PortVl(in, in_vl)];
  size_t ov = PortVl(out, out_vl);
  auto it = std::find_if(buf.begin(), buf.end(), [&](const Resident& r) { return r.id == p.id; });
  if (it == buf.end()) return;
  // Without output buffers the packet is sent (or discarded) now: nothing older is pending.
  bool cioq = s.OutputBufferCapacityBlocks() > 0;
  if (!cioq) leaving_marked_.clear();
  if (it->marked) leaving_marked_.push_back(p.id);
  buf.erase(it);
  // cnt1 counts the packets resident anywhere in the switch [S:L105]: on a CIOQ switch a packet
  // leaves it when it is sent from the output buffer.
  if (!cioq && cnt1_[ov] > 0) --cnt1_[ov];
}

void InputMarking::OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) {
  if (vls_ == 0) Init(s);
  size_t ov = PortVl(out, vl);
  if (s.OutputBufferCapacityBlocks() > 0 && cnt1_[ov] > 0) --cnt1_[ov];
  bool mark;
  if (opt_.trigger == Trigger::kNaive) {
    auto it = std::find(leaving_marked_.begin(), leaving_marked_.end(), p->id);
    mark = it != leaving_marked_.end();
    if (mark) leaving_marked_.erase(it);
  } else {
    uint32_t& c = cnt2_[PortVl(out, vl)];
    mark = c > 0;
    if (mark) --c;
  }
  // Data only: an ACK or CNP carries no FECN anyone would echo.
  if (mark && p->payload_len > 0) p->bth().set_fecn(true);
}

}  // namespace ibemu::cc::santos
