// The host's part of self-tuned throttling [S:L133-L137, S:L297-L299]: it counts the payload
// delivered to it and reports it on each sample signal; on each estimate broadcast (the network's
// full-buffer count sampled g ago, and the threshold) it extrapolates the count linearly from
// the last two snapshots over the next g and closes every (port, SL) gate while the estimate is
// above the threshold: no new packet starts, packets on the wire go on. With ALO its switch
// tells it when to stop.
#pragma once
#include <cstdint>

#include "emulator/cc/hca_cc.h"
#include "emulator/cc/selftuned/selftuned_options.h"

namespace ibemu::cc::selftuned {

class GlobalGate : public HcaCc {
 public:
  explicit GlobalGate(const Options& o) : opt_(o) {}

  Echo OnReceive(HcaView& h, int port, Packet& p) override;
  void OnSignal(HcaView& h, uint32_t a, uint64_t b) override;
  void OnTimer(HcaView& h, uint32_t a, uint64_t b) override;
  void OnControl(HcaView& h, int port, uint32_t a, uint64_t b) override;
  int Throttle(HcaView& h, uint32_t qp) override { return throttled_; }

  // The estimate at t from the snapshots s1 (taken at t0 - g) and s0 (at t0), linear or held.
  static double Estimate(const Options& o, double s0, double s1, SimTime t0, SimTime t);

 private:
  void Set(HcaView& h, bool throttled);
  void Gate(HcaView& h, int port, bool closed);

  Options opt_;
  uint64_t delivered_ = 0;
  bool have_one_ = false;
  double s0_ = 0, s1_ = 0;
  SimTime t0_ = 0;
  uint32_t threshold_ = 0;
  bool throttled_ = false;
  uint64_t generation_ = 0;  // a flip timer from an older estimate is stale
};

}  // namespace ibemu::cc::selftuned
