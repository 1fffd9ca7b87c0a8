#include "emulator/cc/selftuned/full_buffer_count.h"

namespace ibemu::cc::selftuned {

void FullBufferCount::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {
  if (p.blocks() > max_blocks_) max_blocks_ = p.blocks();
  if (opt_.policy == Policy::kAlo && !alo_started_) {
    alo_started_ = true;
    alo_told_.assign(static_cast<size_t>(s.NumPorts() + 1), -1);
    s.PostTimer(s.Now() + opt_.alo_period, 0, 0);
  }
}

bool FullBufferCount::Full(SwitchView& s, int in, int vl) const {
  return max_blocks_ > 0 && s.VlCapacityBlocks() - s.InputUsedBlocks(in, vl) < max_blocks_;
}

void FullBufferCount::OnSignal(SwitchView& s, uint32_t a, uint64_t b) {
  if (a != kSample) return;
  uint64_t full = 0, all = 0;
  for (int in = 1; in <= s.NumPorts(); ++in) {
    if (!s.PeerIsSwitch(in)) continue;
    for (int vl = 0; vl < s.DataVls(); ++vl) {
      ++all;
      full += Full(s, in, vl);
    }
  }
  s.Report(kFullCount, full | all << 32);
}

// A packet routed by LFT and SL2VL can use one VL of one output: its only useful channel and
// virtual channel. The test is whether that one has room for it.
bool FullBufferCount::AloBlocked(SwitchView& s, int in) const {
  for (int out = 1; out <= s.NumPorts(); ++out)
    for (int vl = 0; vl < s.DataVls(); ++vl)
      if (s.QueuedBlocksFrom(in, out, vl) > 0 && s.PeerCreditBlocks(out, vl) < max_blocks_)
        return true;
  return false;
}

void FullBufferCount::OnTimer(SwitchView& s, uint32_t a, uint64_t b) {
  for (int in = 1; in <= s.NumPorts(); ++in) {
    if (s.PeerIsSwitch(in)) continue;
    int8_t blocked = AloBlocked(s, in);
    if (blocked == alo_told_[in]) continue;
    alo_told_[in] = blocked;
    s.SendControl(in, kAloState, static_cast<uint64_t>(blocked));
  }
  s.PostTimer(s.Now() + opt_.alo_period, 0, 0);
}

}  // namespace ibemu::cc::selftuned
