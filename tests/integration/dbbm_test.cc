// Nachiondo et al.'s DDBBM cases on the 64-node BMIN (configs/scenarios/dbbm/,
// docs/experiments/dbbm.md): the shapes the paper reports, each scheme against DDBBM-5Q.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

// The first 1 ms of the 2 ms runs, measured from 0.3 ms.
Outcome RunCase(const std::string& name) {
  return RunScenario("configs/scenarios/dbbm/" + name + ".yaml", [](scenario::Scenario& s) {
    s.duration = 1 * link::kPsPerMs;
    s.measure_from = 300 * link::kPsPerUs;
    s.measure_to = s.duration;
  });
}

double Throughput(const Outcome& o) {
  double t = 0;
  for (const auto& [name, f] : o.flows) t += f.rx_gbps;
  return t;
}

// What each host received, on the wire: its leaf's down port, over the run (index = host - 1).
std::vector<double> PerDestination(const Outcome& o) {
  std::vector<double> r(64, 0);
  for (const fabric::PortSummary& p : o.run.ports)
    if (p.vl == 0 && p.device.rfind("L2-", 0) == 0 && p.peer[0] == 'H')
      r[std::stoi(p.peer.substr(1)) - 1] = static_cast<double>(p.tx_bytes);
  return r;
}

TEST(Ddbbm, Case2BDdbbmEqualsVoqnetAndDbbmAndVoqswLoseToHolBlocking) {
  double ddbbm = Throughput(RunCase("2b-ddbbm5")), voqnet = Throughput(RunCase("2b-voqnet"));
  double dbbm4 = Throughput(RunCase("2b-dbbm4")), voqsw = Throughput(RunCase("2b-voqsw"));
  double voqsw_static = Throughput(RunCase("2b-voqsw-static"));
  // The paper: DDBBM-5Q = VOQnet; DBBM-4Q 92 %, VOQsw 70 % of DDBBM [D:L233]. Ours: DBBM-4Q
  // 0.83 and the paper's VOQsw (static buffer shares) 0.86; IB's VOQsw, whose queues share the
  // VL's buffer, is hogged by the tree, as 1Q is (0.29). The page explains each difference.
  EXPECT_NEAR(ddbbm / voqnet, 1.0, 0.02);
  EXPECT_GT(dbbm4 / ddbbm, 0.75);
  EXPECT_LT(dbbm4 / ddbbm, 0.92);
  EXPECT_GT(voqsw_static / ddbbm, 0.75);
  EXPECT_LT(voqsw_static / ddbbm, 0.95);
  EXPECT_LT(voqsw / ddbbm, 0.4);
}

TEST(Ddbbm, ThePapersFormAndTheIbFormDeliverTheSamePacketsAtTheSameTimes) {
  Outcome ib = RunCase("2b-ddbbm5"), paper = RunCase("2b-ddbbm5-paper");
  // The queue is a VL either way, chosen by the source's SL or by every switch from the DLID and
  // the congestion bit: the same packets take the same queues. Only the headers differ.
  for (const auto& [name, f] : ib.flows) {
    EXPECT_EQ(f.rx_packets, paper.flows.at(name).rx_packets) << name;
    EXPECT_EQ(f.mean_us, paper.flows.at(name).mean_us) << name;
  }
  EXPECT_NE(ib.run.digest, paper.run.digest);
  EXPECT_EQ(CreditViolations(ib.run), "");
  EXPECT_EQ(CreditViolations(paper.run), "");
}

TEST(Ddbbm, Case3BDbbmVictimsAreEveryFourthDestinationAndDdbbmIsFlat) {
  auto stats = [](const std::vector<double>& v, bool victims) {
    double sum = 0;
    int n = 0;
    for (int i = 0; i < 64; ++i)
      if (i != 30 && (i % 4 == 30 % 4) == victims) sum += v[i], ++n;
    return sum / n;
  };
  std::vector<double> dbbm4 = PerDestination(RunCase("3b-dbbm4"));
  // H31 (index 30) is the hotspot: its DLID shares DBBM-4Q's queue with every fourth host's.
  EXPECT_LT(stats(dbbm4, true), 0.4 * stats(dbbm4, false));
  std::vector<double> ddbbm = PerDestination(RunCase("3b-ddbbm5"));
  double mean = (stats(ddbbm, true) + 3 * stats(ddbbm, false)) / 4;
  for (int i = 0; i < 64; ++i) {
    if (i == 30) continue;  // the hotspot
    EXPECT_GT(ddbbm[i], 0.85 * mean) << "H" << i + 1;
  }
  EXPECT_GT(ddbbm[30], 1.8 * mean);  // the hotspot's link is full
}

TEST(Ddbbm, Case1BWithoutTheSourceTestDdbbmFallsAndWithSit6ItMatchesVoqnet) {
  double voqnet = Throughput(RunCase("1b-voqnet"));
  double sit0 = Throughput(RunCase("1b-ddbbm5-sit0")), sit6 = Throughput(RunCase("1b-ddbbm5"));
  // Uniform traffic at 100 %: with SIT 0 every destination receiving above DT looks congested
  // and sends its sources into the one dynamic queue (Fig. 3); SIT 6 sees no few heavy
  // sources (Fig. 4).
  EXPECT_LT(sit0 / voqnet, 0.9);
  EXPECT_GT(sit6 / voqnet, 0.95);
}

TEST(Ddbbm, OnMeshesOnlyDdbbmReachesVoqnetAndDbbmBeatsVoqsw) {
  for (const char* mesh : {"3m", "5m"}) {
    std::string c = mesh;
    double ddbbm = Throughput(RunCase(c + "-ddbbm5")), voqnet = Throughput(RunCase(c + "-voqnet"));
    double dbbm4 = Throughput(RunCase(c + "-dbbm4")), voqsw = Throughput(RunCase(c + "-voqsw"));
    // [D:L240]: "only DDBBM is able to achieve VOQnet throughput"; DBBM above VOQsw, the worst.
    EXPECT_NEAR(ddbbm / voqnet, 1.0, 0.02) << c;
    EXPECT_LT(dbbm4, 0.97 * ddbbm) << c;
    EXPECT_GT(dbbm4, 1.2 * voqsw) << c;
  }
}

TEST(Ddbbm, UcTrafficIsNeverAcknowledged) {
  Outcome o = RunScenario("configs/scenarios/testbed-scenario1.yaml", [](scenario::Scenario& s) {
    s.duration = 100 * link::kPsPerUs;
    for (auto& [node, sources] : s.sources)
      for (hca::TrafficSource& t : sources) t.uc = true;
  });
  // Everything the hosts sent is their data packets: no ACK (and no CNP, CC being off).
  uint64_t data = 0, sent = 0;
  for (const stats::FlowStats& f : o.run.flows.flows) data += f.tx_packets;
  for (const fabric::PortSummary& p : o.run.ports)
    if (p.vl == 0 && p.device[0] == 'H') sent += p.tx_packets;
  EXPECT_GT(data, 50u);
  EXPECT_EQ(sent, data);
}

}  // namespace
}  // namespace ibemu::testing
