// The `ib` mechanism: InfiniBand congestion control as annex A10 specifies it, with the settings
// in every node's CCA (the scenario's congestion_control section, or a CC manager at run time).
#include <memory>

#include "emulator/cc/ib/ca_throttling.h"
#include "emulator/cc/ib/switch_marking.h"
#include "emulator/cc/mechanism.h"

namespace ibemu::cc::ib {

Options Options::From(const policy::Params& p) {
  p.CheckKeys({"evaluation", "marking", "hysteresis_blocks", "cct_base_ns", "timer_restart_on_becn",
               "becn_on_ack"});
  Options o;
  std::string ev = p.Choice("evaluation", "sum", {"sum", "voq", "sum_per_input"});
  o.evaluation = ev == "voq"             ? Evaluation::kVoq
                 : ev == "sum_per_input" ? Evaluation::kSumPerInput
                                         : Evaluation::kSum;
  o.marking = p.Choice("marking", "random", {"random", "counter"}) == "counter" ? Marking::kCounter
                                                                                : Marking::kRandom;
  o.hysteresis_blocks = static_cast<uint32_t>(p.Int("hysteresis_blocks", 0, 0, 1 << 20));
  o.cct_base = static_cast<engine::SimTime>(p.Double("cct_base_ns", 0, 0, 1e9) * 1000);
  o.timer_restart_on_becn = p.Bool("timer_restart_on_becn", false);
  o.becn_on_ack = p.Bool("becn_on_ack", true);
  return o;
}

namespace {

class IbCc : public Mechanism {
 public:
  explicit IbCc(const Options& o) : opt_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t seed) const override {
    Options o = opt_;
    o.seed = seed;
    return std::make_unique<SwitchMarking>(o);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t seed) const override {
    return std::make_unique<CaThrottling>(opt_);
  }

 private:
  Options opt_;
};

}  // namespace

void Register() {
  MechanismRegistry::Get().Add(
      "ib",
      "InfiniBand CC (IBA annex A10): switch FECN marking per Port VL, BECN/CNP, CCTI and CCT "
      "throttling per QP or SL; settings from the CCAs",
      [](const policy::Params& p) { return std::make_unique<IbCc>(Options::From(p)); });
}

}  // namespace ibemu::cc::ib
