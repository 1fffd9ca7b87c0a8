// The switch's part of self-tuned throttling: on the side band's sample signal it reports how
// many of its network input buffers (per port and VL, ports whose peer is a switch: the paper
// counts no injection or delivery buffers, 3072 of them in its 16x16 torus [S:L215]) are full,
// and how many there are. Full: no room for another packet as large as the largest it has seen.
// With the ALO policy it instead tells each host, every alo_period, whether a packet that host
// sent it waits for an output VL with no room for it (At-Least-One [S:L225], where a packet's
// only useful virtual channel is its LFT output on its SL2VL lane).
#pragma once
#include <vector>

#include "emulator/cc/selftuned/selftuned_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::selftuned {

class FullBufferCount : public SwitchCc {
 public:
  explicit FullBufferCount(const Options& o) : opt_(o) {}

  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override;
  void OnSignal(SwitchView& s, uint32_t a, uint64_t b) override;
  void OnTimer(SwitchView& s, uint32_t a, uint64_t b) override;

 private:
  bool Full(SwitchView& s, int in, int vl) const;
  // ALO at input `in` (a host's): whether a packet from it waits for an output none of whose
  // VLs has room for it at the peer.
  bool AloBlocked(SwitchView& s, int in) const;

  Options opt_;
  uint32_t max_blocks_ = 0;
  bool alo_started_ = false;
  std::vector<int8_t> alo_told_;  // [port]: -1 never, else the last state sent
};

}  // namespace ibemu::cc::selftuned
