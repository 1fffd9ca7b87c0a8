// The `santos` mechanism: Santos, Turner and Janakiraman's end-to-end congestion control for
// InfiniBand (docs/cc/santos.md): switch input-buffer marking (naive, proposed, or an output
// trigger for comparison), FECN echoed on per-packet ACKs, and sources with a window and a rate
// moved by AIMD, FIMD or LIPD.
#include <memory>
#include <set>

#include "common/link/link_rate.h"
#include "emulator/cc/mechanism.h"
#include "emulator/cc/santos/input_marking.h"
#include "emulator/cc/santos/window_rate_source.h"

namespace ibemu::cc::santos {

Options Options::From(const policy::Params& p) {
  p.CheckKeys(
      {"trigger", "fill", "window", "rate", "discrete", "r_min", "m", "persistent", "flow_gap_us"});
  Options o;
  std::string t = p.Choice("trigger", "proposed", {"none", "naive", "proposed", "output"});
  o.trigger = t == "none"     ? Trigger::kNone
              : t == "naive"  ? Trigger::kNaive
              : t == "output" ? Trigger::kOutput
                              : Trigger::kProposed;
  o.fill = p.Double("fill", 0, 0, 1);
  o.window = static_cast<int>(p.Int("window", 1, 0, 1024));
  std::set<std::string> rates(RateFunctionNames().begin(), RateFunctionNames().end());
  rates.insert("none");
  o.rate = p.Choice("rate", "lipd", rates);
  o.discrete = p.Bool("discrete", true);
  o.r_min = p.Double("r_min", 1.0 / 256, 1e-6, 0.5);
  o.m = p.Double("m", 2, 1.0001, 1e6);
  o.persistent = p.Bool("persistent", true);
  o.flow_gap = static_cast<engine::SimTime>(p.Double("flow_gap_us", 0, 0, 1e9) * link::kPsPerUs);
  return o;
}

namespace {

class Santos : public Mechanism {
 public:
  explicit Santos(const Options& o) : opt_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override {
    if (opt_.trigger == Trigger::kNone) return nullptr;
    return std::make_unique<InputMarking>(opt_);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override {
    return std::make_unique<WindowRateSource>(opt_);
  }

 private:
  Options opt_;
};

}  // namespace

void Register() {
  MechanismRegistry::Get().Add(
      "santos",
      "Santos et al. end-to-end CC: input-buffer marking (naive/proposed/output), ECN echoed "
      "on per-packet ACKs, window and AIMD/FIMD/LIPD rate per QP",
      [](const policy::Params& p) { return std::make_unique<Santos>(Options::From(p)); });
}

}  // namespace ibemu::cc::santos
