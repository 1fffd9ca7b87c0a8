// Traffic entries expand into per-HCA sources exactly as docs/scenarios.md says.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "emulator/scenario/scenario.h"

namespace ibemu::scenario {
namespace {

Scenario FromYaml(const std::string& name, const std::string& traffic) {
  std::filesystem::path p = std::filesystem::temp_directory_path() / ("ibemu_tp_" + name + ".yaml");
  std::ofstream(p) << "name: " << name << "\nseed: 7\ntopology:\n  generator: testbed\n"
                   << "run:\n  duration: 1ms\ntraffic:\n"
                   << traffic;
  Scenario s = LoadScenario(p.string());
  std::filesystem::remove(p);
  return s;
}

size_t SourceCount(const Scenario& s) {
  size_t n = 0;
  for (const auto& [node, v] : s.sources) n += v.size();
  return n;
}

TEST(TrafficPatterns, UniformGivesEveryHostASourceToEveryOtherHost) {
  Scenario s = FromYaml("uniform", "  - {pattern: uniform, load: 0.5, message_bytes: 4096}\n");
  ASSERT_EQ(SourceCount(s), 7u);
  for (const auto& [node, v] : s.sources) {
    ASSERT_EQ(v.size(), 1u);
    const hca::TrafficSource& t = v[0];
    EXPECT_EQ(t.arrival, hca::Arrival::kPoisson);
    EXPECT_EQ(t.phases.size(), 1u);
    EXPECT_EQ(t.phases[0].dlids.size(), 6u) << node;
    // Half of a 4x DDR host link (16 Gbit/s of data).
    EXPECT_EQ(t.rate_bps, 8'000'000'000);
    EXPECT_EQ(t.message_bytes, 4096u);
  }
}

TEST(TrafficPatterns, RandomPermutationIsADerangementFixedByTheSeed) {
  auto pairs = [](const Scenario& s) {
    std::set<std::pair<std::string, uint16_t>> p;
    for (const auto& [node, v] : s.sources) p.insert({node, v[0].phases[0].dlids[0]});
    return p;
  };
  Scenario a = FromYaml("perm_a", "  - {pattern: permutation, kind: random}\n");
  Scenario b = FromYaml("perm_b", "  - {pattern: permutation, kind: random}\n");
  ASSERT_EQ(SourceCount(a), 7u);
  EXPECT_EQ(pairs(a), pairs(b));
  std::set<uint16_t> dests;
  for (const auto& [node, v] : a.sources) {
    ASSERT_EQ(v[0].phases[0].dlids.size(), 1u);
    dests.insert(v[0].phases[0].dlids[0]);
  }
  EXPECT_EQ(dests.size(), 7u);  // every host receives exactly once
}

TEST(TrafficPatterns, IncastSendsFromEverySourceButTheDestination) {
  Scenario s = FromYaml("incast", "  - {pattern: incast, dst: H5, sources: [H1, H2, H5, H6]}\n");
  EXPECT_EQ(SourceCount(s), 3u);
  EXPECT_EQ(s.sources.count("H5"), 0u);
  uint16_t h5 = s.sources.at("H1")[0].phases[0].dlids[0];
  for (const auto& [node, v] : s.sources) EXPECT_EQ(v[0].phases[0].dlids[0], h5);
}

TEST(TrafficPatterns, HotspotWeightsSendTheFractionToTheHotspot) {
  Scenario s =
      FromYaml("hot", "  - {pattern: hotspot, hotspots: [H5], fraction: 0.25, load: 0.1}\n");
  const hca::TrafficSource& t = s.sources.at("H1")[0];
  const auto& ph = t.phases[0];
  ASSERT_EQ(ph.dlids.size(), 6u);
  ASSERT_EQ(ph.cum_weights.size(), 6u);
  // The hotspot comes first with 25 % of the weight; the five others share the rest.
  EXPECT_NEAR(static_cast<double>(ph.cum_weights[0]) / ph.cum_weights.back(), 0.25, 1e-6);
}

TEST(TrafficPatterns, MovingTreeCyclesThroughItsHotspots) {
  Scenario s = FromYaml("moving",
                        "  - {pattern: tree, kind: moving, hotspots: [H4, H5], lifetime: 100us}\n");
  const hca::TrafficSource& t = s.sources.at("H1")[0];
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].from, 0);
  EXPECT_EQ(t.phases[1].from, 100 * link::kPsPerUs);
  EXPECT_EQ(t.cycle, 200 * link::kPsPerUs);
  EXPECT_NE(t.phases[0].dlids[0], t.phases[1].dlids[0]);
}

TEST(TrafficPatterns, WindyTreeAlternatesHotspotAndUniform) {
  Scenario s =
      FromYaml("windy", "  - {pattern: tree, kind: windy, hotspots: [H5], period: 50us}\n");
  const hca::TrafficSource& t = s.sources.at("H1")[0];
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].dlids.size(), 1u);
  EXPECT_EQ(t.phases[1].dlids.size(), 6u);
  EXPECT_EQ(t.cycle, 100 * link::kPsPerUs);
}

TEST(TrafficPatterns, OnOffNeedsBothDurations) {
  EXPECT_THROW(FromYaml("onoff", "  - {src: H1, dst: H4, on: 10us}\n"), ScenarioError);
  Scenario s = FromYaml("onoff2", "  - {src: H1, dst: H4, on: 10us, off: 30us}\n");
  EXPECT_EQ(s.sources.at("H1")[0].onoff.on, 10 * link::kPsPerUs);
  EXPECT_EQ(s.sources.at("H1")[0].onoff.off, 30 * link::kPsPerUs);
}

TEST(TrafficPatterns, DurationsAndRatesParseWithUnits) {
  link::SimTime t;
  EXPECT_TRUE(ParseDuration("2.5ms", &t));
  EXPECT_EQ(t, 2'500'000'000);
  EXPECT_TRUE(ParseDuration("100 us", &t));
  EXPECT_EQ(t, 100'000'000);
  EXPECT_FALSE(ParseDuration("5 parsecs", &t));
  EXPECT_FALSE(ParseDuration("ms", &t));
  int64_t r;
  EXPECT_TRUE(ParseRate("13Gbps", &r));
  EXPECT_EQ(r, 13'000'000'000);
  EXPECT_TRUE(ParseRate("500 Mbit/s", &r));
  EXPECT_EQ(r, 500'000'000);
  EXPECT_FALSE(ParseRate("13 GB", &r));
}

}  // namespace
}  // namespace ibemu::scenario
