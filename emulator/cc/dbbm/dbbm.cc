// The `dbbm` and `ddbbm` mechanisms: Nachiondo, Flich and Duato's destination-based buffer
// management (docs/cc/dbbm.md). DBBM maps each destination to one of x queues; DDBBM adds a
// dynamic queue for destinations their own detector finds congested. On IB a queue is a VL.
#include <memory>

#include "common/link/link_rate.h"
#include "emulator/cc/dbbm/dbbm_ca.h"
#include "emulator/cc/dbbm/header_queues.h"
#include "emulator/cc/mechanism.h"

namespace ibemu::cc::dbbm {

Options Options::From(const policy::Params& p, bool dynamic) {
  Options o;
  o.dynamic = dynamic;
  if (dynamic)
    p.CheckKeys({"queues", "form", "tf_ns", "dt", "lt", "sit", "sit_of", "ns", "ns_rule"});
  else
    p.CheckKeys({"queues", "form"});
  o.queues = static_cast<int>(p.Int("queues", 4, 1, dynamic ? 14 : 15));
  o.form = p.Choice("form", "ib", {"ib", "paper"}) == "paper" ? Form::kPaper : Form::kIb;
  o.tf = static_cast<engine::SimTime>(p.Double("tf_ns", 50000, 1, 1e9) * link::kPsPerNs);
  o.dt = p.Double("dt", 0.95, 0, 10);
  o.lt = p.Double("lt", 0.2, 0, 10);
  if (o.lt > o.dt) throw policy::ParamError("lt", 0, "lt must not exceed dt");
  o.sit = p.Double("sit", 6, 0, 1e6);
  o.sit_of_max = p.Choice("sit_of", "received", {"received", "max"}) == "max";
  o.ns = static_cast<int>(p.Int("ns", 1, 0, 1 << 16));
  o.ns_at_least = p.Choice("ns_rule", "at_least", {"more", "at_least"}) == "at_least";
  return o;
}

namespace {

class Dbbm : public Mechanism {
 public:
  explicit Dbbm(const Options& o) : opt_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override {
    if (opt_.form == Form::kIb) return nullptr;  // the IB form needs no switch change
    return std::make_unique<HeaderQueues>(opt_);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override { return std::make_unique<DbbmCa>(opt_); }
  std::string CheckFabric(int data_vls) const override {
    if (opt_.NumVls() <= data_vls) return "";
    return "needs " + std::to_string(opt_.NumVls()) +
           " data VLs, one per queue; fabric.data_vls is " + std::to_string(data_vls);
  }

 private:
  Options opt_;
};

}  // namespace

void Register() {
  auto& r = MechanismRegistry::Get();
  r.Add("dbbm",
        "Nachiondo et al. DBBM: x queues per port (VLs), queue = destination mod x, chosen as the "
        "SL at the source (IB form) or at every switch (paper form)",
        [](const policy::Params& p) { return std::make_unique<Dbbm>(Options::From(p, false)); });
  r.Add("ddbbm",
        "Nachiondo et al. DDBBM: DBBM plus a dynamic queue for destinations that detect "
        "congestion (TF, ORB, SRB, DT, LT, SIT, NS) and notify their sources",
        [](const policy::Params& p) { return std::make_unique<Dbbm>(Options::From(p, true)); });
}

}  // namespace ibemu::cc::dbbm
