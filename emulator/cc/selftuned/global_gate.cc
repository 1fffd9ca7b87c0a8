#include "emulator/cc/selftuned/global_gate.h"

#include <cmath>

namespace ibemu::cc::selftuned {

Echo GlobalGate::OnReceive(HcaView& h, int port, Packet& p) {
  delivered_ += p.payload_len;
  return Echo::kNone;
}

double GlobalGate::Estimate(const Options& o, double s0, double s1, SimTime t0, SimTime t) {
  if (!o.extrapolate) return s0;
  double e = s0 + (s0 - s1) * static_cast<double>(t - t0) / static_cast<double>(o.g);
  return e < 0 ? 0 : e;
}

void GlobalGate::Gate(HcaView& h, int port, bool closed) {
  for (int sl = 0; sl < 16; ++sl) h.SetSlGate(port, sl, closed ? kGateClosed : h.Now());
}

void GlobalGate::Set(HcaView& h, bool throttled) {
  if (throttled == throttled_) return;
  throttled_ = throttled;
  for (int p = 1; p <= h.NumPorts(); ++p) Gate(h, p, throttled);
}

void GlobalGate::OnSignal(HcaView& h, uint32_t a, uint64_t b) {
  if (a == kSample) {
    h.Report(kDelivered, delivered_);
    delivered_ = 0;
    return;
  }
  if (a != kEstimate) return;
  // Sampled g ago; the previous snapshot g before that.
  s1_ = have_one_ ? s0_ : static_cast<double>(b & 0xFFFFFFFF);
  s0_ = static_cast<double>(b & 0xFFFFFFFF);
  have_one_ = true;
  t0_ = h.Now() - opt_.g;
  threshold_ = static_cast<uint32_t>(b >> 32);
  ++generation_;
  double thr = threshold_;
  bool now = Estimate(opt_, s0_, s1_, t0_, h.Now()) > thr;
  Set(h, now);
  // The estimate is linear until the next broadcast, g from now: it crosses the threshold at
  // most once on the way.
  if (!opt_.extrapolate || s0_ == s1_) return;
  double cross = static_cast<double>(t0_) + (thr - s0_) * static_cast<double>(opt_.g) / (s0_ - s1_);
  // Strictly above the threshold after the crossing when rising, at or below when falling.
  SimTime at = static_cast<SimTime>(std::floor(cross)) + 1;
  if (at > h.Now() && at < h.Now() + opt_.g) h.PostTimer(at, 0, generation_);
}

void GlobalGate::OnTimer(HcaView& h, uint32_t a, uint64_t b) {
  if (b != generation_) return;
  Set(h, Estimate(opt_, s0_, s1_, t0_, h.Now()) > threshold_);
}

void GlobalGate::OnControl(HcaView& h, int port, uint32_t a, uint64_t b) {
  if (a != kAloState) return;
  throttled_ = b != 0;
  Gate(h, port, throttled_);
}

}  // namespace ibemu::cc::selftuned
