// Self-tuned throttling's logic on its own (notes B.1.3-B.1.7): the hill climbing of Table 1,
// the local-maxima avoidance and its staleness, and the linear extrapolation between snapshots.
#include <gtest/gtest.h>

#include "emulator/cc/selftuned/global_gate.h"
#include "emulator/cc/selftuned/tuner.h"

namespace ibemu::cc::selftuned {
namespace {

Options Paper(bool local_maxima) {
  Options o;  // 1 % up, 4 % down, first threshold 1 %, drop at 75 %, 5 in a row stale
  o.local_maxima = local_maxima;
  return o;
}

TEST(SelfTunedTuner, Table1MovesTheThresholdByTheDropAndWhetherItThrottled) {
  // 3072 buffers as in the paper's 16x16 torus: first threshold 30, steps +30 and -122.
  Tuner t(Paper(false), 3072);
  EXPECT_EQ(t.threshold(), 30u);
  t.EndPeriod(1000, 10, /*throttled=*/true);  // no drop, throttling: up
  EXPECT_EQ(t.threshold(), 60u);
  t.EndPeriod(1000, 10, /*throttled=*/false);  // no drop, not throttling: unchanged
  EXPECT_EQ(t.threshold(), 60u);
  t.EndPeriod(800, 10, true);  // 80 %: not a drop
  EXPECT_EQ(t.threshold(), 90u);
  t.EndPeriod(590, 10, true);    // below 75 % of 800: down, throttling or not
  EXPECT_EQ(t.threshold(), 0u);  // 90 - 122, clamped
  t.EndPeriod(590, 10, true);
  EXPECT_EQ(t.threshold(), 30u);
}

TEST(SelfTunedTuner, APeriodFarBelowTheBestGoesBackToTheLowerOfItsThresholdAndCount) {
  Tuner t(Paper(true), 3072);
  t.EndPeriod(1000, 10, true);  // the best so far, at threshold 30 with 10 full buffers
  EXPECT_EQ(t.threshold(), 60u);
  t.EndPeriod(1000, 50, true);
  EXPECT_EQ(t.threshold(), 90u);
  t.EndPeriod(700, 400, false);  // 70 % of the best: min(T_max 30, N_max 10)
  EXPECT_EQ(t.threshold(), 10u);
}

TEST(SelfTunedTuner, AMaximumThatKeepsCorrectingIsForgottenAfterFivePeriods) {
  Tuner t(Paper(true), 3072);
  t.EndPeriod(1000, 40, true);  // best, at threshold 30 and 40 full
  for (int i = 0; i < 4; ++i) t.EndPeriod(500, 90, true);
  EXPECT_EQ(t.threshold(), 30u);  // corrected four times to min(30, 40)
  t.EndPeriod(500, 90, true);     // the fifth: the maximum is stale and forgotten
  EXPECT_EQ(t.threshold(), 30u);
  t.EndPeriod(500, 90, true);  // 500 is the new best: Table 1 again (no drop, throttling)
  EXPECT_EQ(t.threshold(), 60u);
}

TEST(SelfTunedTuner, AStaticThresholdNeverMoves) {
  Options o;
  o.policy = Policy::kStatic;
  o.threshold = 250;
  Tuner t(o, 3072);
  t.EndPeriod(1000, 10, true);
  t.EndPeriod(10, 3000, true);
  EXPECT_EQ(t.threshold(), 250u);
}

TEST(SelfTunedGate, TheEstimateExtrapolatesTheLastTwoSnapshotsOrHoldsTheLast) {
  Options o;
  o.g = 1000;
  // 100 then 140 full buffers, g apart: 40 more every g.
  EXPECT_DOUBLE_EQ(GlobalGate::Estimate(o, 140, 100, 5000, 5000), 140);
  EXPECT_DOUBLE_EQ(GlobalGate::Estimate(o, 140, 100, 5000, 6500), 200);
  EXPECT_DOUBLE_EQ(GlobalGate::Estimate(o, 10, 100, 5000, 6500), 0);  // never below 0
  o.extrapolate = false;
  EXPECT_DOUBLE_EQ(GlobalGate::Estimate(o, 140, 100, 5000, 6500), 140);
}

}  // namespace
}  // namespace ibemu::cc::selftuned
