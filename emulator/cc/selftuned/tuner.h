// The self-tuning of Thottethodi et al. (HPCA 2001, §4 [S:L147-L185]; notes B.1.6-B.1.8): every
// tuning period, from the throughput delivered in it, the threshold on the network's count of
// full buffers moves by Table 1 (a drop of more than 25 %: down; no drop while throttling: up;
// else unchanged), and with local-maxima avoidance a period significantly below the best one
// seen goes back to min(T_max, N_max), the maximum forgotten after `stale` such periods in a row.
// Pure logic, driven by the side band (and by the unit tests).
#pragma once
#include <cstdint>

#include "emulator/cc/selftuned/selftuned_options.h"

namespace ibemu::cc::selftuned {

class Tuner {
 public:
  Tuner(const Options& o, uint32_t all_buffers);

  uint32_t threshold() const { return threshold_; }
  // One tuning period's end: the payload delivered in it, the latest full-buffer count, and
  // whether the sources were throttled at some point in it.
  void EndPeriod(uint64_t delivered, uint32_t full, bool throttled);

 private:
  void Move(int64_t by);

  Options opt_;
  uint32_t all_;
  uint32_t threshold_;
  uint32_t inc_, dec_;
  uint64_t last_ = 0;
  uint64_t max_ = 0;
  uint32_t n_max_ = 0, t_max_ = 0;
  int corrections_ = 0;
};

}  // namespace ibemu::cc::selftuned
