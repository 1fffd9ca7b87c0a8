// The side band of self-tuned throttling (H7; [S:L121-L139], notes B.1.2): every g it signals
// every device to sample; the switches report their full buffers and the hosts the payload
// delivered to them, and g after the sample it broadcasts the network's count with the
// threshold, tuned every `tune_periods` gathers (Tuner) or fixed. One tuner for the fabric: the
// paper's nodes each run the same one on the same data [notes B.6.16].
#pragma once
#include <memory>

#include "emulator/cc/selftuned/tuner.h"
#include "emulator/cc/side_band.h"

namespace ibemu::cc::selftuned {

class GlobalGather : public SideBandCc {
 public:
  explicit GlobalGather(const Options& o) : opt_(o) {}

  void Start(SideBandView& v) override { v.PostTimer(0, 0, 0); }
  void OnReport(SideBandView& v, engine::LpId from, uint32_t a, uint64_t b) override;
  void OnTimer(SideBandView& v, uint32_t a, uint64_t b) override;

 private:
  Options opt_;
  std::unique_ptr<Tuner> tuner_;
  uint64_t index_ = 0;
  uint64_t full_ = 0, all_ = 0, delivered_ = 0;  // this sample's reports
  uint64_t period_delivered_ = 0;
  int in_period_ = 0;
  bool throttled_ = false;
};

}  // namespace ibemu::cc::selftuned
