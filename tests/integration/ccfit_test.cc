// The thesis's Paper V case #4 (configs/scenarios/ccfit/, docs/experiments/ccfit.md): FBICM's
// isolation and CCFIT's isolation with throttling against 1Q, ITh and VOQnet, as the hot spots
// come (1 ms) and go (2 ms). Shapes, not numbers: each scheme against its own level before.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

struct Phases {
  double before = 0;  // network throughput, Gbit/s: 0.5-1 ms
  double during = 0;  // 1-2 ms, the hot spots on
  double worst = 0;   // the lowest 50 us bin from 1 ms on
  uint64_t marked = 0;
};

Phases RunCase(int trees, const std::string& scheme) {
  Outcome o = RunScenario(
      "configs/scenarios/ccfit/case4-" + std::to_string(trees) + "tree-" + scheme + ".yaml",
      [](scenario::Scenario& s) { s.duration = 2 * link::kPsPerMs; });
  std::vector<double> bins(40, 0);  // 50 us each
  Phases p;
  for (const stats::FlowStats& f : o.run.flows.flows) {
    const auto& v = f.rx_payload.values();
    for (size_t b = 0; b < bins.size() && b < v.size(); ++b)
      bins[b] += static_cast<double>(v[b]) * 8 / 50e3;  // bytes per 50 us -> Gbit/s
    p.marked += f.rx_fecn;
  }
  auto mean = [&](int a, int b) {
    double s = 0;
    for (int i = a; i < b; ++i) s += bins[i];
    return s / (b - a);
  };
  p.before = mean(10, 20);
  p.during = mean(20, 40);
  p.worst = *std::min_element(bins.begin() + 20, bins.end());
  return p;
}

TEST(Ccfit, OneTreeIsolationKeepsTheNetworkFlowingWhereOneQueueAndIthCollapse) {
  Phases q1 = RunCase(1, "1q"), ith = RunCase(1, "ith"), fbicm = RunCase(1, "fbicm"),
         ccfit = RunCase(1, "ccfit"), ccfit_voq = RunCase(1, "ccfit-voq"),
         voqnet = RunCase(1, "voqnet");
  // The paper (Fig. 8a): FBICM and CCFIT excellent, 2 CFQs being enough for one tree; ITh copes
  // poorly; 1Q struggles as soon as congestion appears.
  EXPECT_GT(fbicm.during, 0.95 * fbicm.before);
  EXPECT_GT(ccfit.during, 0.93 * ccfit.before);
  EXPECT_LT(q1.during, 0.3 * q1.before);
  EXPECT_LT(ith.during, 0.5 * ith.before);
  // On the same VOQsw switches CCFIT is as good as VOQnet, with 2 CFQs where VOQnet has 64.
  EXPECT_GT(ccfit_voq.during, 0.97 * voqnet.during);
  EXPECT_GT(ccfit.marked, 0u);  // the root CFQs' outputs marked, the sources throttled
  EXPECT_EQ(fbicm.marked, 0u);
}

TEST(Ccfit, FourTreesThrottlingFreesTheCfqsThatIsolationAloneRunsOutOf) {
  Phases fbicm = RunCase(4, "fbicm"), ccfit = RunCase(4, "ccfit");
  // The paper (Fig. 8b): with more trees than CFQs FBICM struggles, and CCFIT is significantly
  // better: throttling releases CFQs and CAM lines before isolation runs out of them.
  EXPECT_LT(fbicm.worst, 0.85 * fbicm.before);
  EXPECT_GT(ccfit.worst, 0.9 * ccfit.before);
  EXPECT_GT(ccfit.during, fbicm.during);
}

}  // namespace
}  // namespace ibemu::testing
