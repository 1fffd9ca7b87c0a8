// The `selftuned` mechanism: Thottethodi, Lebeck and Mukherjee's self-tuned global throttling
// (HPCA 2001; docs/cc/selftuned.md): the fabric's count of full buffers gathered every g over
// the side band, extrapolated between snapshots, against a threshold tuned by hill climbing
// (or fixed), gating every host's new packets; and the ALO baseline.
#include <memory>

#include "common/link/link_rate.h"
#include "emulator/cc/mechanism.h"
#include "emulator/cc/selftuned/full_buffer_count.h"
#include "emulator/cc/selftuned/global_gate.h"
#include "emulator/cc/selftuned/global_gather.h"

namespace ibemu::cc::selftuned {

Options Options::From(const policy::Params& p) {
  p.CheckKeys({"policy", "g_ns", "extrapolate", "initial", "increment", "decrement", "tune_periods",
               "drop", "local_maxima", "significant", "stale", "threshold", "alo_period_ns"});
  Options o;
  std::string pol = p.Choice("policy", "tune", {"tune", "static", "alo"});
  o.policy = pol == "static" ? Policy::kStatic : pol == "alo" ? Policy::kAlo : Policy::kTune;
  // The side band's latency is g/4 (a sample's reports are in after half of g), so g is a
  // whole number of 4 ps.
  o.g = static_cast<engine::SimTime>(p.Double("g_ns", 564, 0.004, 1e9) * link::kPsPerNs) / 4 * 4;
  o.extrapolate = p.Bool("extrapolate", true);
  o.initial = p.Double("initial", 0.01, 0, 1);
  o.increment = p.Double("increment", 0.01, 0, 1);
  o.decrement = p.Double("decrement", 0.04, 0, 1);
  o.tune_periods = static_cast<int>(p.Int("tune_periods", 3, 1, 1000));
  o.drop = p.Double("drop", 0.75, 0, 1);
  o.local_maxima = p.Bool("local_maxima", true);
  o.significant = p.Double("significant", 0.75, 0, 1);
  o.stale = static_cast<int>(p.Int("stale", 5, 1, 1000));
  o.threshold = static_cast<uint32_t>(p.Int("threshold", 0, 0, UINT32_MAX));
  o.alo_period =
      static_cast<engine::SimTime>(p.Double("alo_period_ns", 100, 1, 1e9) * link::kPsPerNs);
  return o;
}

namespace {

class SelfTuned : public Mechanism {
 public:
  explicit SelfTuned(const Options& o) : opt_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override {
    return std::make_unique<FullBufferCount>(opt_);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override {
    return std::make_unique<GlobalGate>(opt_);
  }
  std::unique_ptr<SideBandCc> ForSideBand() const override {
    if (opt_.policy == Policy::kAlo) return nullptr;
    return std::make_unique<GlobalGather>(opt_);
  }
  SimTime SideBandLatency() const override { return opt_.g / 4; }

 private:
  Options opt_;
};

}  // namespace

void Register() {
  MechanismRegistry::Get().Add(
      "selftuned",
      "Thottethodi et al. self-tuned global throttling: full-buffer count gathered over a side "
      "band, threshold by hill climbing (or static), a global gate on new packets; ALO baseline",
      [](const policy::Params& p) { return std::make_unique<SelfTuned>(Options::From(p)); });
}

}  // namespace ibemu::cc::selftuned
