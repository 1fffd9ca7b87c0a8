#include "emulator/cc/selftuned/global_gather.h"

#include <algorithm>

namespace ibemu::cc::selftuned {

void GlobalGather::OnReport(SideBandView& v, engine::LpId from, uint32_t a, uint64_t b) {
  if (a == kFullCount) {
    full_ += b & 0xFFFFFFFF;
    all_ += b >> 32;
  } else if (a == kDelivered) {
    delivered_ += b;
  }
}

void GlobalGather::OnTimer(SideBandView& v, uint32_t a, uint64_t b) {
  // The reports of the last sample came in half a period ago (two side-band latencies): its
  // snapshot goes out now and reaches every device g after it was taken.
  if (index_ > 0) {
    uint32_t full = static_cast<uint32_t>(std::min<uint64_t>(full_, UINT32_MAX));
    if (!tuner_) tuner_ = std::make_unique<Tuner>(opt_, static_cast<uint32_t>(all_));
    throttled_ = throttled_ || full > tuner_->threshold();
    period_delivered_ += delivered_;
    if (++in_period_ == opt_.tune_periods) {
      tuner_->EndPeriod(period_delivered_, full, throttled_);
      period_delivered_ = 0;
      in_period_ = 0;
      throttled_ = false;
    }
    v.Broadcast(kEstimate, uint64_t{full} | uint64_t{tuner_->threshold()} << 32);
  }
  full_ = all_ = delivered_ = 0;
  v.Broadcast(kSample, index_++);
  v.PostTimer(v.Now() + opt_.g, 0, 0);
}

}  // namespace ibemu::cc::selftuned
