#include "emulator/cc/selftuned/tuner.h"

#include <algorithm>

namespace ibemu::cc::selftuned {

Tuner::Tuner(const Options& o, uint32_t all_buffers)
    : opt_(o),
      all_(all_buffers),
      // Truncated, as the paper's 30 and 122 of 3072 buffers [S:L175].
      threshold_(o.policy == Policy::kStatic ? o.threshold
                                             : static_cast<uint32_t>(o.initial * all_buffers)),
      inc_(std::max<uint32_t>(1, static_cast<uint32_t>(o.increment * all_buffers))),
      dec_(std::max<uint32_t>(1, static_cast<uint32_t>(o.decrement * all_buffers))) {}

void Tuner::Move(int64_t by) {
  int64_t t = static_cast<int64_t>(threshold_) + by;
  threshold_ = static_cast<uint32_t>(std::clamp<int64_t>(t, 0, all_));
}

void Tuner::EndPeriod(uint64_t delivered, uint32_t full, bool throttled) {
  if (opt_.policy != Policy::kTune) return;
  uint64_t last = last_;
  last_ = delivered;
  if (opt_.local_maxima) {
    // The best period so far, with the count and threshold it had [S:L181]. Updated first: a
    // new maximum is not a period below it.
    if (delivered > max_) {
      max_ = delivered;
      n_max_ = full;
      t_max_ = threshold_;
    }
    if (static_cast<double>(delivered) < opt_.significant * static_cast<double>(max_)) {
      threshold_ = std::min(t_max_, n_max_);  // [S:L183]
      if (++corrections_ >= opt_.stale) {
        max_ = 0;  // stale: search for the maximum again [S:L185]
        corrections_ = 0;
      }
      return;
    }
    corrections_ = 0;
  }
  // Table 1 [S:L154-L159].
  if (static_cast<double>(delivered) < opt_.drop * static_cast<double>(last))
    Move(-static_cast<int64_t>(dec_));
  else if (throttled)
    Move(inc_);
}

}  // namespace ibemu::cc::selftuned
