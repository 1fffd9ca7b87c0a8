// IB CC end to end on the thesis test bed (Paper III's parameters): the victim recovers, the
// contributors share the hot link, CC costs little where there is no victim, the marks and echoes
// are where the hot spot is, and a switch set to Threshold 0 changes nothing at all.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

const fabric::PortSummary* Port(const fabric::RunResult& r, const std::string& dev, int port) {
  for (const auto& p : r.ports)
    if (p.device == dev && p.port == port && p.vl == 0) return &p;
  return nullptr;
}

uint64_t TotalFecn(const fabric::RunResult& r) {
  uint64_t n = 0;
  for (const auto& p : r.ports) n += p.tx_fecn;
  return n;
}

TEST(IbCcTestBed, Scenario1TheVictimRecoversAndTheContributorsShareTheHotLink) {
  Outcome off = RunScenario("configs/scenarios/testbed-scenario1-cc-off.yaml");
  Outcome on = RunScenario("configs/scenarios/testbed-scenario1-cc-on.yaml");
  const double host = 13.0;  // H5's (and H4's) host rate
  // CC off: the parking lot (F4, F5 a third of H5 each, F2, F3 a sixth) and the victim held to
  // F2's rate by HoL blocking at S1.
  EXPECT_NEAR(off.flows["F4"].rx_gbps, host / 3, 0.05 * host / 3);
  EXPECT_LT(off.flows["F1"].rx_gbps, 2.5);
  // CC on: the victim runs at its host rate again, about six times its CC-off rate (Paper III:
  // an order of magnitude), and the four contributors get a quarter of H5 each.
  EXPECT_GT(on.flows["F1"].rx_gbps, 0.97 * host);
  EXPECT_GT(on.flows["F1"].rx_gbps, 5 * off.flows["F1"].rx_gbps);
  double total = 0;
  for (const char* f : {"F2", "F3", "F4", "F5"}) {
    EXPECT_NEAR(on.flows[f].rx_gbps, host / 4, 0.10 * host / 4) << f;
    total += on.flows[f].rx_gbps;
  }
  EXPECT_GT(total, 0.96 * host);  // and H5 stays busy
  EXPECT_EQ(CreditViolations(on.run), "");
}

// Scenario 2's flows are constant-rate sources over equal links, so the throttling episodes (one
// flow at 5-7 Gbit/s for 10-20 ms) lock into the timing: one run's 500 ms window can leave any
// flow 10-40 % below the others, and which flow depends on the switch latency to the nanosecond
// (at exactly 100 ns the three are even). Fairness is a property of the ensemble: over switch
// latencies from 95 to 120 ns each flow's mean is within a few percent of the others'. Without
// hysteresis F1 loses every time (Paper II's Type I unfairness), which the ensemble must show
// too (docs/experiments/testbed-ib-cc.md).
constexpr int kScenario2LatenciesNs[] = {95,  96,  97,  98,  99,  100, 101,
                                         102, 103, 104, 105, 110, 120};

std::map<std::string, double> Scenario2(int latency_ns, int hysteresis_blocks) {
  Outcome o = RunScenario("configs/scenarios/testbed-scenario2-cc-on.yaml", [&](auto& s) {
    s.sw.latency = latency_ns * link::kPsPerNs;
    s.cc.params.Set("hysteresis_blocks", std::to_string(hysteresis_blocks));
  });
  std::map<std::string, double> r;
  for (const char* f : {"F1", "F2", "F3"}) r[f] = o.flows[f].rx_gbps;
  return r;
}

TEST(IbCcTestBed, Scenario2CostsLittleThroughput) {
  Outcome off = RunScenario("configs/scenarios/testbed-scenario2-cc-off.yaml");
  std::map<std::string, double> on = Scenario2(100, 33);
  double t_off = 0, t_on = 0;
  for (const char* f : {"F1", "F2", "F3"}) {
    t_off += off.flows[f].rx_gbps;
    t_on += on[f];
  }
  // Paper III: CC on costs 3.5 % of the mean; here under 3 %.
  EXPECT_GT(t_on, 0.97 * t_off);
  EXPECT_LE(t_on, t_off * 1.001);
}

TEST(IbCcTestBed, Scenario2IsFairOverSwitchLatenciesAndWithoutHysteresisF1Loses) {
  std::map<std::string, double> sum;
  for (int ns : kScenario2LatenciesNs)
    for (auto& [f, g] : Scenario2(ns, 33)) sum[f] += g;
  double total = sum["F1"] + sum["F2"] + sum["F3"];
  for (const auto& [f, g] : sum) EXPECT_NEAR(g, total / 3, 0.05 * total / 3) << f;

  // Without hysteresis F1 gets about 5.5 Gbit/s against 13 at every latency of the sweep; three
  // suffice.
  for (int ns : {96, 100, 110}) {
    std::map<std::string, double> h0 = Scenario2(ns, 0);
    EXPECT_LT(h0["F1"], 0.6 * h0["F2"]) << ns << " ns";
    EXPECT_LT(h0["F1"], 0.6 * h0["F3"]) << ns << " ns";
  }
}

TEST(IbCcTestBed, MarksAreMadeAtTheHotSpotAndEchoedBackToItsContributors) {
  Outcome on = RunScenario("configs/scenarios/testbed-scenario1-cc-on.yaml");
  const fabric::RunResult& r = on.run;
  // S2 port 2 leads to the hot spot H5: most marked packets leave there...
  uint64_t hot = Port(r, "S2", 2)->tx_fecn;
  EXPECT_GT(hot, 1000u);
  EXPECT_GT(hot, 10 * Port(r, "S2", 1)->tx_fecn);  // ...not on the victim's way to H4
  // H5 echoes them all, in CNPs or on ACKs, and only H5 does.
  EXPECT_EQ(Port(r, "H5", 1)->tx_becn, hot);
  EXPECT_EQ(Port(r, "H4", 1)->tx_becn, Port(r, "S2", 1)->tx_fecn);
  // The echoes reach the contributors (through S1 for F2, F3), not the victim's source.
  uint64_t back = Port(r, "S2", 3)->tx_becn + Port(r, "S2", 4)->tx_becn + Port(r, "S2", 5)->tx_becn;
  EXPECT_EQ(back, hot + Port(r, "S2", 1)->tx_fecn);
  EXPECT_LT(Port(r, "S1", 1)->tx_becn, Port(r, "S1", 2)->tx_becn / 5);
}

TEST(IbCc, ThresholdZeroMarksNothingAndChangesNothing) {
  auto no_threshold = [](scenario::Scenario& s) {
    s.cc.all.sw.threshold = 0;
    for (auto& [node, cs] : s.cc.node) cs.sw.threshold = 0;
    s.duration = 100 * link::kPsPerMs;
    s.measure_from = 80 * link::kPsPerMs;
    s.measure_to = s.duration;
  };
  Outcome zero = RunScenario("configs/scenarios/testbed-scenario1-cc-on.yaml", no_threshold);
  Outcome none =
      RunScenario("configs/scenarios/testbed-scenario1-cc-on.yaml", [&](scenario::Scenario& s) {
        no_threshold(s);
        s.cc.mechanism = "none";
        s.cc.params = {};
      });
  EXPECT_EQ(TotalFecn(zero.run), 0u);
  EXPECT_EQ(zero.run.digest, none.run.digest);
  EXPECT_EQ(zero.run.events, none.run.events);
}

}  // namespace
}  // namespace ibemu::testing

namespace ibemu::testing {
namespace {

// Payload Gbit/s of flow `name` delivered in [from_ms, to_ms), from the run's 1 ms bins.
double GbpsBetween(const Outcome& o, const std::string& name, int from_ms, int to_ms) {
  const stats::FlowTable& t = o.run.flows;
  size_t i = std::find(t.names.begin(), t.names.end(), name) - t.names.begin();
  const auto& bins = t.flows.at(i).rx_payload.values();
  double bytes = 0;
  for (int b = from_ms; b < to_ms; ++b) bytes += static_cast<double>(bins[b]);
  return bytes * 8 / ((to_ms - from_ms) * 1e-3) / 1e9;
}

double MaxOverMin(const std::vector<double>& v) {
  return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
}

// 4x DDR: 16 Gbit/s of data, 2048 of every 2074 bytes payload.
constexpr double kDdrPayload = 16.0 * 2048 / 2074;

TEST(Paper2, TypeIOneThresholdLeavesTheLinkToTheFlowAddedLastAndHysteresisSharesIt) {
  Outcome one = RunScenario("configs/scenarios/paper2-type1-one-threshold.yaml");
  Outcome two = RunScenario("configs/scenarios/paper2-type1-hysteresis.yaml");
  EXPECT_GT(one.flows["F3"].rx_gbps, 2 * one.flows["F1"].rx_gbps);
  EXPECT_GT(one.flows["F3"].rx_gbps, 2 * one.flows["F2"].rx_gbps);
  double total = 0;
  for (const char* f : {"F1", "F2", "F3"}) total += two.flows[f].rx_gbps;
  EXPECT_GT(total, 0.9 * kDdrPayload);
  for (const char* f : {"F1", "F2", "F3"})
    EXPECT_NEAR(two.flows[f].rx_gbps, total / 3, 0.08 * total / 3) << f;
}

TEST(Paper2, ParkingLotIsResolvedWithMarkingRateOneAndSlowlyWithTen) {
  Outcome off = RunScenario("configs/scenarios/paper2-parking-lot-cc-off.yaml");
  Outcome on = RunScenario("configs/scenarios/paper2-parking-lot-cc-on.yaml");
  Outcome mr10 = RunScenario("configs/scenarios/paper2-parking-lot-mr10.yaml");
  // CC off: per-input round robin at S2 gives F4 and F5 twice F2 and F3; F1 is held to F2's rate.
  EXPECT_NEAR(off.flows["F4"].rx_gbps, 2 * off.flows["F2"].rx_gbps, 0.05 * off.flows["F4"].rx_gbps);
  EXPECT_NEAR(off.flows["F5"].rx_gbps, 2 * off.flows["F3"].rx_gbps, 0.05 * off.flows["F5"].rx_gbps);
  EXPECT_NEAR(off.flows["F1"].rx_gbps, off.flows["F2"].rx_gbps, 0.05 * off.flows["F2"].rx_gbps);
  // CC on: the close contributors are punished as much as they take, all four get a quarter of
  // H5's link, and F1 its own link.
  EXPECT_GT(on.flows["F1"].rx_gbps, 0.99 * kDdrPayload);
  std::vector<double> share;
  for (const char* f : {"F2", "F3", "F4", "F5"}) share.push_back(on.flows[f].rx_gbps);
  EXPECT_LT(MaxOverMin(share), 1.12);
  // Marking_Rate 10 (timer x 10): the 20 ms after F5 joins are still far from even, where
  // Marking_Rate 1 is already close; both end up even.
  auto window = [](const Outcome& o, int from, int to) {
    std::vector<double> v;
    for (const char* f : {"F2", "F3", "F4", "F5"}) v.push_back(GbpsBetween(o, f, from, to));
    return MaxOverMin(v);
  };
  EXPECT_GT(window(mr10, 80, 100), 2.0);
  EXPECT_LT(window(on, 80, 100), 1.4);
  EXPECT_LT(window(mr10, 300, 400), 1.2);
}

}  // namespace
}  // namespace ibemu::testing
