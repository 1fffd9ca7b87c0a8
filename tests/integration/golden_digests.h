// Pinned event-trace digests of committed scenarios at this commit's model (one process; every
// partitioning must give the same). A change that alters one must update it here on purpose and
// say in its commit message what changed in the model and why (docs/testing.md).
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace ibemu::testing {

struct Golden {
  std::string name;      // the test's name for it
  std::string scenario;  // relative to the source tree
  std::string extra;     // further `ibemu run` options
  std::string digest;
  long long events;
  long long packet_hops;
};

inline void PrintTo(const Golden& g, std::ostream* os) {
  *os << g.scenario << g.extra;
}

// Thesis scenarios, both queuing models, FC both ways, a VLArb table, and the 648-node fat tree
// (generator, min-hop routing, Poisson arrivals) for 10 us.
inline const std::vector<Golden>& Goldens() {
  static const std::vector<Golden> all{
      {"Fig24VoqSw", "configs/scenarios/fig2_4.yaml", "", "d808e033377f0fab", 25775, 6688},
      {"Fig24VoqNet", "configs/scenarios/fig2_4_voqnet.yaml", "", "84dd30af9df35678", 45184, 10639},
      {"TestBedScenario1", "configs/scenarios/testbed-scenario1.yaml", "", "7e0f2d6f019874ce",
       78948, 18413},
      {"Bidirectional", "tests/data/scenarios/bidirectional.yaml", "", "487620ba548fe454", 61332,
       11878},
      {"VlArbSet", "tests/data/scenarios/vlarb_set.yaml", "", "f8699c54dafe049a", 12565, 2983},
      {"FatTree648For10us", "configs/scenarios/bench/fat-tree-648-uniform80.yaml",
       " --duration 10us", "4205d46aadb68d18", 219281, 51646},
  };
  return all;
}

inline const Golden& GoldenFor(const std::string& name) {
  for (const Golden& g : Goldens())
    if (g.name == name) return g;
  static const Golden none{};
  return none;
}

}  // namespace ibemu::testing
