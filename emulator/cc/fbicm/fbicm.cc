// The `fbicm` and `ccfit` mechanisms (docs/cc/fbicm.md): FBICM's congested-flow isolation, and
// CCFIT, the same isolation combined with IB CC's marking and throttling (thesis Paper V).
#include <memory>
#include <set>
#include <string>

#include "emulator/cc/fbicm/cfq_isolation.h"
#include "emulator/cc/fbicm/cfq_source.h"
#include "emulator/cc/ib/ca_throttling.h"
#include "emulator/cc/mechanism.h"

namespace ibemu::cc::fbicm {

Options Options::From(const policy::Params& p, Kind kind) {
  bool ecocc = kind == Kind::kEcocc || kind == Kind::kHfdi;
  bool marks = kind == Kind::kCcfit || kind == Kind::kEcocc;
  std::set<std::string> keys = {"cfqs", "out_lines"};
  if (ecocc) keys.insert({"hth_bytes", "lth_bytes"});
  if (!ecocc) keys.insert({"detect_bytes", "stop_bytes", "go_bytes"});
  if (kind == Kind::kCcfit) keys.insert({"high_bytes", "low_bytes"});
  if (marks) keys.insert({"marking_rate", "packet_size_bytes", "cct_base_ns"});
  p.CheckKeys(keys);
  auto blocks = [&](const char* key, uint32_t def) {
    return static_cast<uint32_t>(p.Int(key, def * 64, 64, 1 << 30) / 64);
  };
  Options o;
  o.cfqs = static_cast<int>(p.Int("cfqs", 2, 1, 64));
  o.out_lines = static_cast<int>(p.Int("out_lines", 16, 1, 4096));
  o.detect_blocks = blocks("detect_bytes", o.detect_blocks);
  o.stop_blocks = blocks("stop_bytes", o.stop_blocks);
  o.go_blocks = blocks("go_bytes", o.go_blocks);
  if (o.go_blocks >= o.stop_blocks)
    throw policy::ParamError("go_bytes", 0, "go_bytes must be below stop_bytes");
  o.throttle = marks;
  o.voq_roots = o.root_credit_test = ecocc;
  // EcoCC's two thresholds, HTh and LTh: 6 and 4 packets (L6891-L6892).
  o.high_blocks = ecocc ? blocks("hth_bytes", 6 * 33) : blocks("high_bytes", o.high_blocks);
  o.low_blocks = ecocc ? blocks("lth_bytes", 4 * 33) : blocks("low_bytes", o.low_blocks);
  if (o.low_blocks >= o.high_blocks)
    throw policy::ParamError(ecocc ? "lth_bytes" : "low_bytes", 0,
                             "the low threshold must be below the high one");
  o.marking_rate = p.Double("marking_rate", 0.85, 0, 1);
  o.packet_size_blocks = static_cast<uint32_t>(p.Int("packet_size_bytes", 0, 0, 1 << 20) / 64);
  return o;
}

namespace {

class Fbicm : public Mechanism {
 public:
  Fbicm(const Options& o, const ib::Options& ib) : opt_(o), ib_(ib) {}
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t seed) const override {
    return std::make_unique<CfqIsolation>(opt_, seed);
  }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override {
    if (!opt_.throttle) return std::make_unique<CfqSource>(nullptr);
    return std::make_unique<CfqSource>(std::make_unique<ib::CaThrottling>(ib_));
  }

 private:
  Options opt_;
  ib::Options ib_;
};

}  // namespace

void Register() {
  auto& r = MechanismRegistry::Get();
  auto make = [](Options::Kind kind, const policy::Params& p) {
    Options o = Options::From(p, kind);
    ib::Options ib;
    ib.becn_on_ack = false;  // a CNP for each marked packet, as the papers' destinations do
    // CCFIT's Timer[i] restarts on every BECN (L5859-L5861); EcoCC's sources are IB CC's.
    ib.timer_restart_on_becn = kind == Options::Kind::kCcfit;
    ib.cct_base = static_cast<engine::SimTime>(p.Double("cct_base_ns", 0, 0, 1e9) * 1000);
    return std::make_unique<Fbicm>(o, ib);
  };
  r.Add("fbicm",
        "FBICM: congested-flow queues (CFQs) with CAM lines per input port, detection at the "
        "normal queue, allocation and Stop/Go propagated upstream, release when the tree drains",
        [make](const policy::Params& p) { return make(Options::Kind::kFbicm, p); });
  r.Add("ccfit",
        "CCFIT: FBICM's isolation plus IB CC throttling: root CFQs above High mark the packets "
        "leaving their output; sources throttle per destination (CCT, CCTI, timer restarted on "
        "BECN)",
        [make](const policy::Params& p) { return make(Options::Kind::kCcfit, p); });
  r.Add("ecocc",
        "EcoCC: VOQ switches whose VOQs above HTh are roots (marked for IB CC's throttling) and "
        "HPQs with CAM lines against high-order HoL blocking upstream; Stop/Go at HTh/LTh",
        [make](const policy::Params& p) { return make(Options::Kind::kEcocc, p); });
  r.Add("hfdi", "HFDI: EcoCC's hot-flow isolation without its injection throttling",
        [make](const policy::Params& p) { return make(Options::Kind::kHfdi, p); });
}

}  // namespace ibemu::cc::fbicm
