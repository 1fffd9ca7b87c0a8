// Thottethodi, Lebeck and Mukherjee's self-tuned throttling on the 16x16 torus
// (configs/scenarios/selftuned/, docs/experiments/selftuned.md): the shapes that hold on IB.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

constexpr double kCapacityGbps = 256 * 8.0;  // every host's link

double Delivered(const std::string& scheme, double load) {
  Outcome o = RunScenario("configs/scenarios/selftuned/torus-uniform-" + scheme + ".yaml",
                          [&](scenario::Scenario& s) {
                            for (auto& [host, sources] : s.sources)
                              for (auto& src : sources)
                                src.rate_bps = static_cast<int64_t>(load * 8e9);
                          });
  return o.flows.at("uniform").rx_gbps / kCapacityGbps;
}

TEST(SelfTuned, PastSaturationTuneKeepsThroughputNearItsPeakWhereBaseDips) {
  // Saturation is at about 0.17 of the link per host; at 0.3 Base's FIFOs lose a fifth of it.
  double base = Delivered("base", 0.3), tune = Delivered("tune", 0.3);
  double tune_peak = Delivered("tune", 0.2), tune_over = Delivered("tune", 1.0);
  EXPECT_GT(tune, 1.1 * base);
  EXPECT_GT(tune, 0.85 * tune_peak);
  EXPECT_GT(tune_over, 0.85 * tune_peak);
}

double MeanLatencyUs(const std::string& scheme, uint64_t* packets) {
  Outcome o = RunScenario("configs/scenarios/selftuned/torus-bursty-" + scheme + ".yaml");
  double sum = 0;
  *packets = 0;
  for (const auto& [name, f] : o.flows) {
    sum += f.mean_us * static_cast<double>(f.rx_packets);
    *packets += f.rx_packets;
  }
  return sum / static_cast<double>(*packets);
}

TEST(SelfTuned, UnderBurstsTuneGivesTheLowestMeanLatencyOfTheSamePackets) {
  uint64_t nb = 0, na = 0, nt = 0;
  double base = MeanLatencyUs("base", &nb), alo = MeanLatencyUs("alo", &na),
         tune = MeanLatencyUs("tune", &nt);
  // Every scheme delivered every packet by the end: the means are of the same packets.
  EXPECT_EQ(na, nb);
  EXPECT_EQ(nt, nb);
  // The paper (avoidance): Base 520 > ALO 509 >> Tune 163 cycles. Here ALO gains nothing on
  // Base (its one usable VL per packet blocks hosts more often: docs/experiments/selftuned.md)
  // and Tune is a quarter below both.
  EXPECT_LT(tune, 0.85 * base);
  EXPECT_LT(tune, 0.85 * alo);
  EXPECT_GT(alo, 0.95 * base);
}

}  // namespace
}  // namespace ibemu::testing
