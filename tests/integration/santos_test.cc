// Santos, Turner, Janakiraman's experiments on the two-switch fabric of their Fig. 1
// (configs/scenarios/santos/, docs/experiments/santos.md): the shapes the paper reports.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

constexpr double kLink = 8.0;  // Gbit/s of data on 4x SDR, the paper's 1 GB/s

struct Shares {
  double local = 0, remote = 0, victim = 0;
  double root() const { return local + remote; }
  double isl() const { return remote + victim; }
};

Shares SharesOf(const Outcome& o) {
  Shares s;
  for (const auto& [name, f] : o.flows) {
    double x = f.rx_gbps / kLink;
    if (name[0] == 'L') s.local += x;
    if (name[0] == 'R') s.remote += x;
    if (name == "V") s.victim += x;
  }
  return s;
}

TEST(Santos, WithoutCcTheVictimGetsAboutASixthOfAnInterSwitchLinkThatIsAThirdUsed) {
  Shares s = SharesOf(RunScenario("configs/scenarios/santos/s-b1-no-cc.yaml"));
  // Paper (S-B1): the victim 15 %, the inter-switch link about 30 % used.
  EXPECT_NEAR(s.victim, 0.15, 0.04);
  EXPECT_NEAR(s.isl(), 0.30, 0.06);
  EXPECT_GT(s.root(), 0.95);
}

TEST(Santos, AWindowOfOnePacketLetsTheVictimTakeIdleBandwidth) {
  Shares none = SharesOf(RunScenario("configs/scenarios/santos/s-b1-no-cc.yaml"));
  Shares w1 = SharesOf(RunScenario("configs/scenarios/santos/s-b2-window.yaml"));
  EXPECT_GT(w1.victim, 2.5 * none.victim);
  EXPECT_GT(w1.isl(), 1.5 * none.isl());
  EXPECT_GT(w1.root(), 0.95);
}

// fabric.switch.bypass_limit: the victim's packets may pass the remote packet waiting at B's
// inter-switch input four times; then the input waits for it. Without the limit they pass it
// freely (virtual output queues) and the victim gets most of the idle link.
TEST(Santos, TheBypassLimitHoldsAnInputForItsOldestPacket) {
  Shares limit4 = SharesOf(RunScenario("configs/scenarios/santos/s-b2-window.yaml"));
  Shares free = SharesOf(RunScenario("configs/scenarios/santos/s-b2-window.yaml",
                                     [](scenario::Scenario& s) { s.sw.bypass_limit = 0; }));
  EXPECT_GT(free.victim, 0.7);
  EXPECT_LT(limit4.victim, 0.6);
  EXPECT_GT(limit4.victim, 0.3);
  // The remote flow's packet is held back less often with the limit.
  EXPECT_GT(limit4.remote, free.remote);
}

TEST(Santos, AWindowFailsWithMoreFlowsThanSlotsAndOracleRatesGiveEveryFlowItsShare) {
  Shares w1 = SharesOf(RunScenario("configs/scenarios/santos/s-b3-window-r5.yaml"));
  Shares oracle = SharesOf(RunScenario("configs/scenarios/santos/s-b4-oracle.yaml"));
  // S-B3: five remote flows of one packet each fill B's four slots: spreading again.
  EXPECT_LT(w1.victim, 0.10);
  EXPECT_LT(w1.isl(), 0.35);
  // S-B4: every flow gets the payload rate it is given: 0.77 Gbit/s each, 3.85 the victim.
  EXPECT_NEAR(oracle.local, 5 * 0.77 / kLink, 0.02);
  EXPECT_NEAR(oracle.remote, 5 * 0.77 / kLink, 0.02);
  EXPECT_NEAR(oracle.victim, 3.85 / kLink, 0.02);
}

TEST(Santos, NaiveMarkingFavoursTheLocalFlowsAndTheProposedOneIsFairerAndSparesTheVictim) {
  Shares naive = SharesOf(RunScenario("configs/scenarios/santos/s-b5-naive.yaml"));
  Shares proposed = SharesOf(RunScenario("configs/scenarios/santos/s-b5-proposed.yaml"));
  // Paper (S-B5): with naive marking the local flows take about 90 % of the root link.
  EXPECT_GT(naive.local / naive.root(), 0.85);
  // The proposed marking: the remote flows get more than twice as much (the paper: fairer, the
  // remote flows still below their half), and the victim is no longer held back.
  EXPECT_LT(proposed.local / proposed.root(), 0.75);
  EXPECT_GT(proposed.remote, 2 * naive.remote);
  EXPECT_GT(proposed.victim, 10 * naive.victim);
  EXPECT_GT(proposed.isl(), 0.6);
}

}  // namespace
}  // namespace ibemu::testing
