#include "emulator/cc/santos/input_marking.h"

#include <algorithm>

namespace ibemu::cc::santos {

void InputMarking::Init(SwitchView& s) {
  vls_ = s.DataVls();
  size_t n = static_cast<size_t>(s.NumPorts() + 1) * vls_;
  resident_.resize(n);
  in_full_.assign(n, 0);
  out_full_.assign(n, 0);
  cnt1_.assign(n, 0);
  cnt2_.assign(n, 0);
}

// Full: past the configured fill, or (fill 0) without room for another packet as big as the one
// that arrived, the paper's buffer of four packets that cannot take a fifth.
bool InputMarking::Full(SwitchView& s, uint32_t used, uint32_t arriving) const {
  uint32_t cap = s.VlCapacityBlocks();
  if (opt_.fill > 0) return used >= opt_.fill * cap;
  return used + arriving > cap;
}

void InputMarking::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl,
                             const Packet& p) {
  if (vls_ == 0) Init(s);
  size_t iv = PortVl(in, in_vl), ov = PortVl(out, out_vl);
  std::vector<Resident>& buf = resident_[iv];
  buf.push_back({p.id, static_cast<uint16_t>(out), static_cast<uint8_t>(out_vl), false});
  ++cnt1_[ov];
  if (opt_.trigger == Trigger::kOutput) {
    bool full = Full(s, s.QueuedBlocks(out, out_vl), p.blocks());
    if (full && !out_full_[ov]) cnt2_[ov] = cnt1_[ov];
    out_full_[ov] = full;
    return;
  }
  bool full = Full(s, s.InputUsedBlocks(in, in_vl), p.blocks());
  bool becomes_full = full && !in_full_[iv];
  in_full_[iv] = full;
  if (!becomes_full) return;
  if (opt_.trigger == Trigger::kNaive) {
    for (Resident& r : buf) r.marked = true;
  } else if (opt_.trigger == Trigger::kProposed) {
    // Overwritten, not added: cnt1 already counts the packets an earlier trigger named
    // [S:L111]. Outputs that several packets wait for get the same value again.
    for (const Resident& r : buf) cnt2_[PortVl(r.out, r.vl)] = cnt1_[PortVl(r.out, r.vl)];
  }
}

void InputMarking::OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl,
                             const Packet& p) {
  if (vls_ == 0) Init(s);
  size_t iv = PortVl(in, in_vl), ov = PortVl(out, out_vl);
  std::vector<Resident>& buf = resident_[iv];
  auto it = std::find_if(buf.begin(), buf.end(), [&](const Resident& r) { return r.id == p.id; });
  if (it != buf.end()) {
    leaving_marked_ = it->marked ? p.id : 0;
    buf.erase(it);
    if (cnt1_[ov] > 0) --cnt1_[ov];
  }
  // The edge re-arms once the buffer could take the packet that left.
  if (opt_.trigger == Trigger::kOutput)
    out_full_[ov] = out_full_[ov] && Full(s, s.QueuedBlocks(out, out_vl), p.blocks());
  else
    in_full_[iv] = in_full_[iv] && Full(s, s.InputUsedBlocks(in, in_vl), p.blocks());
}

void InputMarking::OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) {
  if (vls_ == 0) Init(s);
  bool mark;
  if (opt_.trigger == Trigger::kNaive) {
    mark = leaving_marked_ != 0 && leaving_marked_ == p->id;
    leaving_marked_ = 0;
  } else {
    uint32_t& c = cnt2_[PortVl(out, vl)];
    mark = c > 0;
    if (mark) --c;
  }
  // Data only: an ACK or CNP carries no FECN anyone would echo.
  if (mark && p->payload_len > 0) p->bth().set_fecn(true);
}

}  // namespace ibemu::cc::santos
