// The routing engines ibemu-fabricmgr added (common/routing/fat_tree.cc, dor.cc) and the LID
// map it routes with (LidMap::FromLids): every CA reaches every other CA through the LFTs, fat-
// tree paths are shortest up*/down* paths with one root per destination, DOR paths correct the
// dimensions in order along the shorter way round, and the channel dependency graph of DOR's
// paths on a torus, with the VLs its SL2VL gives, has no cycle (while the same paths on one VL
// do, which shows the check can fail).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/routing/lid_map.h"
#include "common/routing/routing_engine.h"
#include "common/topology/generators.h"
#include "emulator/policy/builtin.h"
#include "tests/unit/routing_paths.h"

namespace ibemu::routing {
// A namespace of its own: the sanitizer build compiles test files in batches (a unity build),
// and routing_test.cc has helpers of the same names.
namespace ftree_dor_test {
namespace {

using link::LinkRate;
using link::Speed;
using link::Width;
using paths::CaPort;
using paths::CaPorts;
using paths::Hop;
using paths::WalkAllPairs;
using topology::NodeType;
using topology::PortRef;
using topology::Topology;

const LinkRate kQdr(Width::k4x, Speed::kQDR);

RoutingResult Route(const std::string& engine, const Topology& t, const LidMap& lids) {
  policy::RegisterBuiltins();
  return RoutingRegistry::Get().Make(engine)->Route(t, lids);
}

bool IsSwitch(const Topology& t, int n) {
  return t.nodes[n].type == NodeType::kSwitch;
}

// Whether the channel dependency graph (Dally and Seitz) of every CA-to-CA path has a cycle. A
// channel is (switch, output port, VL); the VL of a hop is what the engine's SL2VL gives the SL
// the engine's path_sl asks the source for (VL0 when the engine gives none, or `one_vl`).
bool DependencyCycle(const Topology& t, const LidMap& lids, const RoutingResult& r, bool one_vl) {
  using Channel = std::tuple<int, int, int>;
  std::map<Channel, std::set<Channel>> next;
  auto vl_of = [&](const Hop& h, uint8_t sl) {
    auto it = r.sl2vl.find(h.sw);
    if (one_vl || it == r.sl2vl.end()) return 0;
    return static_cast<int>(it->second[h.out][sl]);
  };
  WalkAllPairs(t, lids, r, [&](const CaPort& s, const CaPort& d, const std::vector<Hop>& p) {
    uint8_t sl = 0;
    if (auto it = r.path_sl.find(p.front().sw); it != r.path_sl.end()) sl = it->second[d.lid];
    for (size_t i = 0; i + 1 < p.size(); ++i)
      next[{p[i].sw, p[i].out, vl_of(p[i], sl)}].insert(
          {p[i + 1].sw, p[i + 1].out, vl_of(p[i + 1], sl)});
  });
  std::map<Channel, int> color;  // 0 new, 1 on the stack, 2 done
  bool cycle = false;
  std::function<void(const Channel&)> visit = [&](const Channel& c) {
    color[c] = 1;
    for (const Channel& n : next[c]) {
      if (cycle) return;
      if (color[n] == 1) cycle = true;
      if (color[n] == 0) visit(n);
    }
    color[c] = 2;
  };
  for (auto& [c, succ] : next)
    if (!cycle && color[c] == 0) visit(c);
  return cycle;
}

// Switch-to-switch hop distance by BFS.
int SwitchDistance(const Topology& t, int from, int to) {
  std::map<int, int> d{{from, 0}};
  std::vector<int> q{from};
  for (size_t i = 0; i < q.size(); ++i)
    for (int p = 1; p <= t.nodes[q[i]].num_ports; ++p) {
      PortRef peer = t.Peer({q[i], p});
      if (peer.valid() && IsSwitch(t, peer.node) && !d.count(peer.node)) {
        d[peer.node] = d[q[i]] + 1;
        q.push_back(peer.node);
      }
    }
  return d.count(to) ? d[to] : -1;
}

// ---------------------------------------------------------------------------------------------
// Fat tree (D-mod-K)

TEST(FatTreeRouting, DeliversEveryCaPairOnAShortestUpDownPath) {
  for (const Topology& t :
       {topology::KaryNTree(4, 3, kQdr), topology::KaryNTree(2, 2, kQdr),
        topology::TestBed(kQdr, kQdr), topology::FatTree2Level(36, 6, 4, 8, kQdr)}) {
    SCOPED_TRACE(t.name);
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("ftree", t, lids);
    std::vector<int> rank = UpDownRanks(t);
    WalkAllPairs(t, lids, r, [&](const CaPort& s, const CaPort& d, const std::vector<Hop>& p) {
      ASSERT_EQ(static_cast<int>(p.size()) - 1, SwitchDistance(t, p.front().sw, p.back().sw));
      bool gone_down = false;
      for (size_t i = 1; i < p.size(); ++i) {
        bool up = UpDownIsUp(t, rank, p[i - 1].sw, p[i].sw);
        ASSERT_FALSE(gone_down && up)
            << t.nodes[s.ref.node].name << " -> " << t.nodes[d.ref.node].name << " turns up again";
        gone_down = gone_down || !up;
      }
    });
    EXPECT_FALSE(DependencyCycle(t, lids, r, true));
  }
}

TEST(FatTreeRouting, EveryDestinationIsReachedThroughOneRoot) {
  // D-mod-K: the up ports a destination uses are its index's digits, whatever the source.
  Topology t = topology::KaryNTree(4, 3, kQdr);
  LidMap lids = LidMap::Assign(t);
  RoutingResult r = Route("ftree", t, lids);
  std::vector<int> rank = UpDownRanks(t);
  std::map<uint16_t, std::set<int>> roots;
  WalkAllPairs(t, lids, r, [&](const CaPort&, const CaPort& d, const std::vector<Hop>& p) {
    for (const Hop& h : p)
      if (rank[h.sw] == 0) roots[d.lid].insert(h.sw);
  });
  ASSERT_EQ(roots.size(), 64u);
  std::map<int, int> per_root;
  for (auto& [lid, set] : roots) {
    EXPECT_EQ(set.size(), 1u) << "LID " << lid << " comes down from " << set.size() << " roots";
    ++per_root[*set.begin()];
  }
  // ...and the 64 destinations are spread over the 16 roots, 4 each.
  EXPECT_EQ(per_root.size(), 16u);
  for (auto [root, n] : per_root) EXPECT_EQ(n, 4) << t.nodes[root].name;
}

TEST(FatTreeRouting, LeafUplinksCarryEqualShares) {
  Topology t = topology::KaryNTree(4, 3, kQdr);
  LidMap lids = LidMap::Assign(t);
  RoutingResult r = Route("ftree", t, lids);
  for (int leaf : t.Switches()) {
    if (t.nodes[leaf].name.rfind("L2-", 0) != 0) continue;
    std::map<int, int> per_port;
    for (int c : t.Cas())
      if (t.Peer({c, 1}).node != leaf) ++per_port[r.lft.at(leaf)[lids.lid[c][1]]];
    ASSERT_EQ(per_port.size(), 4u) << t.nodes[leaf].name;
    for (auto [port, n] : per_port) EXPECT_EQ(n, 15) << t.nodes[leaf].name << " port " << port;
  }
}

// ---------------------------------------------------------------------------------------------
// Dimension-order routing

// Coordinates from the generator's names: "S1.2.0" -> {1, 2, 0}.
std::vector<int> Coords(const std::string& name) {
  std::vector<int> c;
  std::stringstream s(name.substr(1));
  for (std::string part; std::getline(s, part, '.');) c.push_back(std::stoi(part));
  return c;
}

struct TorusCase {
  std::vector<int> dims;
  int hosts;
  bool wrap;
};

std::string Name(const TorusCase& c) {
  std::string n = c.wrap ? "torus" : "mesh";
  for (int d : c.dims) n += " " + std::to_string(d);
  return n;
}

const TorusCase kTori[] = {{{4, 4}, 1, true}, {{5, 3}, 1, true}, {{3, 3, 3}, 1, true},
                           {{6}, 2, true},    {{4, 2}, 1, true}, {{4, 3}, 1, false}};

TEST(DorRouting, CorrectsDimensionsInOrderTheShorterWayRound) {
  for (const TorusCase& c : kTori) {
    SCOPED_TRACE(Name(c));
    Topology t = topology::Torus(c.dims, c.hosts, kQdr, c.wrap);
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("dor", t, lids);
    WalkAllPairs(t, lids, r, [&](const CaPort& s, const CaPort& d, const std::vector<Hop>& p) {
      std::vector<int> from = Coords(t.nodes[p.front().sw].name);
      std::vector<int> to = Coords(t.nodes[p.back().sw].name);
      int want = 0;
      for (size_t k = 0; k < c.dims.size(); ++k) {
        int delta = std::abs(to[k] - from[k]);
        want += c.wrap ? std::min(delta, c.dims[k] - delta) : delta;
      }
      ASSERT_EQ(static_cast<int>(p.size()) - 1, want)
          << t.nodes[s.ref.node].name << " -> " << t.nodes[d.ref.node].name;
      size_t dim = 0;
      for (size_t i = 1; i < p.size(); ++i) {
        std::vector<int> a = Coords(t.nodes[p[i - 1].sw].name);
        std::vector<int> b = Coords(t.nodes[p[i].sw].name);
        size_t changed = 0;
        while (changed < a.size() && a[changed] == b[changed]) ++changed;
        ASSERT_GE(changed, dim) << "dimension " << changed << " after " << dim;
        dim = changed;
      }
    });
  }
}

TEST(DorRouting, IsDeadlockFreeOnToriOnlyWithItsVls) {
  for (const TorusCase& c : kTori) {
    SCOPED_TRACE(Name(c));
    Topology t = topology::Torus(c.dims, c.hosts, kQdr, c.wrap);
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("dor", t, lids);
    bool rings = false, long_rings = false;
    for (int d : c.dims) {
      rings = rings || (c.wrap && d >= 3);
      long_rings = long_rings || (c.wrap && d >= 4);
    }
    EXPECT_EQ(r.data_vls, rings ? 2 : 1);
    EXPECT_FALSE(DependencyCycle(t, lids, r, false)) << "a cycle with DOR's VLs";
    // On one VL a ring of 4 or more closes the dependency graph (in a ring of 3 every shortest
    // way is one hop): the VLs are what breaks it.
    EXPECT_EQ(DependencyCycle(t, lids, r, true), long_rings);
  }
}

TEST(DorRouting, TheSlOfAPathMarksTheDatelinesItCrosses) {
  // 1-D ring of 6, two hosts per switch: S5 -> S1 goes + (two hops) across the 5-0 dateline.
  Topology t = topology::Torus({6}, 2, kQdr, true);
  LidMap lids = LidMap::Assign(t);
  RoutingResult r = Route("dor", t, lids);
  int s5 = t.FindNode("S5"), s1 = t.FindNode("S1"), s2 = t.FindNode("S2");
  uint16_t h1 = lids.lid[t.FindNode("H1-1")][1];
  uint16_t h2 = lids.lid[t.FindNode("H2-1")][1];
  EXPECT_EQ(r.path_sl.at(s5)[h1], 1);
  EXPECT_EQ(r.path_sl.at(s1)[h2], 0);
  EXPECT_EQ(r.path_sl.at(s2)[h1], 0);
  // The + port (hosts 2, so port 4) of every switch: SL bit 0 set -> VL1.
  for (int s : t.Switches()) {
    EXPECT_EQ(r.sl2vl.at(s)[4][1], 1);
    EXPECT_EQ(r.sl2vl.at(s)[4][0], 0);
    EXPECT_EQ(r.sl2vl.at(s)[1][1], 0) << "host ports stay on VL0";
  }
}

TEST(DorRouting, RefusesWhatIsNotATorus) {
  Topology t = topology::KaryNTree(4, 3, kQdr);
  LidMap lids = LidMap::Assign(t);
  policy::RegisterBuiltins();
  EXPECT_THROW(RoutingRegistry::Get().Make("dor")->Route(t, lids), std::invalid_argument);
}

TEST(MinHopRouting, HasADependencyCycleOnATorus) {
  Topology t = topology::Torus({4, 4}, 1, kQdr, true);
  LidMap lids = LidMap::Assign(t);
  EXPECT_TRUE(DependencyCycle(t, lids, Route("minhop", t, lids), false));
  EXPECT_FALSE(DependencyCycle(t, lids, Route("updown", t, lids), false));
}

// ---------------------------------------------------------------------------------------------
// LIDs an SM gave out

TEST(LidMap, FromLidsKeepsTheGivenLidsWithHoles) {
  Topology t = topology::TestBed(kQdr, kQdr);
  std::vector<std::vector<uint16_t>> given(t.nodes.size());
  for (size_t n = 0; n < t.nodes.size(); ++n) given[n].assign(t.nodes[n].num_ports + 1, 0);
  given[0][0] = 30;  // S1
  given[1][0] = 3;   // S2
  for (int h = 1; h <= 7; ++h) given[1 + h][1] = static_cast<uint16_t>(100 + 10 * h);
  LidMap m = LidMap::FromLids(t, given);
  EXPECT_EQ(m.max_lid(), 170);
  EXPECT_EQ(m.owner[30].node, 0);
  EXPECT_EQ(m.owner[3].node, 1);
  EXPECT_EQ(m.owner[110].node, 2);
  EXPECT_EQ(m.owner[111].node, -1);
  EXPECT_EQ(m.endpoint_lids.size(), 7u);
  for (const char* engine : {"minhop", "updown", "ftree"}) {
    SCOPED_TRACE(engine);
    RoutingResult r = Route(engine, t, m);
    WalkAllPairs(t, m, r, [](const CaPort&, const CaPort&, const std::vector<Hop>&) {});
    EXPECT_EQ(r.lft.at(0)[111], kNoPort) << "a LID nobody has is routed";
  }
}

TEST(LidMap, FromLidsRefusesDuplicatesAndSwitchDataPortLids) {
  Topology t = topology::TestBed(kQdr, kQdr);
  auto blank = [&] {
    std::vector<std::vector<uint16_t>> g(t.nodes.size());
    for (size_t n = 0; n < t.nodes.size(); ++n) g[n].assign(t.nodes[n].num_ports + 1, 0);
    return g;
  };
  auto dup = blank();
  dup[2][1] = dup[3][1] = 5;
  EXPECT_THROW(LidMap::FromLids(t, dup), std::invalid_argument);
  auto data_port = blank();
  data_port[0][4] = 7;
  EXPECT_THROW(LidMap::FromLids(t, data_port), std::invalid_argument);
  auto multicast = blank();
  multicast[2][1] = 0xC000;
  EXPECT_THROW(LidMap::FromLids(t, multicast), std::invalid_argument);
  auto short_table = blank();
  short_table.pop_back();
  EXPECT_THROW(LidMap::FromLids(t, short_table), std::invalid_argument);
}

}  // namespace
}  // namespace ftree_dor_test
}  // namespace ibemu::routing
