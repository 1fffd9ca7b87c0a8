// The `mvcm` mechanism: Ferrer, Baydal, Robles, López and Duato's Marking and Validation
// Congestion Management (IEEE TC 61(9), 2012; docs/cc/mvcm.md): MVPM marking at the switches,
// both bits echoed on every packet's ACK, and sources with a dynamic window and waiting slots.
#include <memory>

#include "common/link/link_rate.h"
#include "common/wire/bth.h"
#include "emulator/cc/ib/ca_throttling.h"
#include "emulator/cc/mechanism.h"
#include "emulator/cc/mvcm/mvcm_source.h"
#include "emulator/cc/mvcm/mvpm_marking.h"

namespace ibemu::cc::mvcm {

uint64_t Options::MaxWs() const {
  if (cap == WsCap::kNone) return 0;
  uint64_t m = 1;
  for (int i = 0; i < (cap == WsCap::kKPowN ? n : n - 1); ++i) m *= static_cast<uint64_t>(k);
  return m;
}

Options Options::From(const policy::Params& p) {
  p.CheckKeys({"th_in", "th_out", "dw_max", "window", "waiting_slots", "k", "n", "ws_cap",
               "rtt_min_ns", "warm", "pure_ipm", "reset_on_idle", "source"});
  Options o;
  o.th_in = p.Double("th_in", 0.66, 0, 1);
  o.th_out = p.Double("th_out", 0.33, 0, 1);
  o.dw_max = static_cast<int>(p.Int("dw_max", 2, 1, 1024));
  o.dynamic_window = p.Choice("window", "dynamic", {"dynamic", "static"}) == "dynamic";
  o.waiting_slots = p.Bool("waiting_slots", true);
  o.k = static_cast<int>(p.Int("k", 4, 2, 64));
  o.n = static_cast<int>(p.Int("n", 3, 1, 10));
  std::string cap = p.Choice("ws_cap", "k^(n-1)", {"k^(n-1)", "k^n", "none"});
  o.cap = cap == "none" ? WsCap::kNone : cap == "k^n" ? WsCap::kKPowN : WsCap::kKPowNMinus1;
  o.rtt_min = static_cast<engine::SimTime>(p.Double("rtt_min_ns", 0, 0, 1e9) * link::kPsPerNs);
  o.warm = p.Bool("warm", true);
  o.pure_ipm = p.Bool("pure_ipm", false);
  o.reset_on_idle = p.Bool("reset_on_idle", true);
  o.ib_source = p.Choice("source", "mvcm", {"mvcm", "ib"}) == "ib";
  return o;
}

namespace {

// IB CC's channel adapter, told of validated packets only: the destination echoes BECN for a
// packet that carries both MB and VB, and the source moves its CCTI as IB CC does.
class ValidatedCaThrottling : public ib::CaThrottling {
 public:
  ValidatedCaThrottling() : ib::CaThrottling(ib::Options{}) {}
  Echo OnReceive(HcaView& h, int port, Packet& p) override {
    if (!(p.bth().resv6a() & kVbInResv6a)) return Echo::kNone;
    return ib::CaThrottling::OnReceive(h, port, p);
  }
};

class Mvcm : public Mechanism {
 public:
  explicit Mvcm(const Options& o) : opt_(o) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override {
    return std::make_unique<MvpmMarking>(opt_);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override {
    if (opt_.ib_source) return std::make_unique<ValidatedCaThrottling>();
    return std::make_unique<MvcmSource>(opt_);
  }

 private:
  Options opt_;
};

}  // namespace

void Register() {
  MechanismRegistry::Get().Add(
      "mvcm",
      "Ferrer et al. MVCM: MVPM marking (MB at inputs, VB at outputs), both echoed on per-packet "
      "ACKs, sources with a dynamic window and waiting slots per QP",
      [](const policy::Params& p) { return std::make_unique<Mvcm>(Options::From(p)); });
}

}  // namespace ibemu::cc::mvcm
