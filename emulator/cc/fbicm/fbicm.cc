// The `fbicm` and `ccfit` mechanisms (docs/cc/fbicm.md): FBICM's congested-flow isolation, and
// CCFIT, the same isolation combined with IB CC's marking and throttling (thesis Paper V).
#include <memory>

#include "emulator/cc/fbicm/cfq_isolation.h"
#include "emulator/cc/fbicm/cfq_source.h"
#include "emulator/cc/ib/ca_throttling.h"
#include "emulator/cc/mechanism.h"

namespace ibemu::cc::fbicm {

Options Options::From(const policy::Params& p, bool ccfit) {
  if (ccfit)
    p.CheckKeys({"cfqs", "out_lines", "detect_bytes", "stop_bytes", "go_bytes", "high_bytes",
                 "low_bytes", "marking_rate", "packet_size_bytes", "cct_base_ns"});
  else
    p.CheckKeys({"cfqs", "out_lines", "detect_bytes", "stop_bytes", "go_bytes"});
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
  o.throttle = ccfit;
  o.high_blocks = blocks("high_bytes", o.high_blocks);
  o.low_blocks = blocks("low_bytes", o.low_blocks);
  if (o.low_blocks >= o.high_blocks)
    throw policy::ParamError("low_bytes", 0, "low_bytes must be below high_bytes");
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
  r.Add("fbicm",
        "FBICM: congested-flow queues (CFQs) with CAM lines per input port, detection at the "
        "normal queue, allocation and Stop/Go propagated upstream, release when the tree drains",
        [](const policy::Params& p) {
          return std::make_unique<Fbicm>(Options::From(p, false), ib::Options{});
        });
  r.Add("ccfit",
        "CCFIT: FBICM's isolation plus IB CC throttling: root CFQs above High mark the packets "
        "leaving their output; sources throttle per destination (CCT, CCTI, timer restarted on "
        "BECN)",
        [](const policy::Params& p) {
          ib::Options ib;
          ib.timer_restart_on_becn = true;  // CCFIT's Timer[i] restarts on every BECN (L5859)
          ib.becn_on_ack = false;
          ib.cct_base = static_cast<engine::SimTime>(p.Double("cct_base_ns", 0, 0, 1e9) * 1000);
          return std::make_unique<Fbicm>(Options::From(p, true), ib);
        });
}

}  // namespace ibemu::cc::fbicm
