// LID assignment and the routing engines (common/routing): every CA reaches every other CA by
// walking the LFTs, min-hop paths are shortest, up*/down* paths never turn from down to up, and
// the LFTs spread destinations evenly over equal uplinks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/routing/lid_map.h"
#include "common/routing/routing_engine.h"
#include "common/topology/generators.h"
#include "emulator/policy/builtin.h"
#include "tests/unit/routing_paths.h"

namespace ibemu::routing {
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
constexpr int kInf = std::numeric_limits<int>::max() / 2;

RoutingResult Route(const std::string& engine, const Topology& t, const LidMap& lids) {
  policy::RegisterBuiltins();
  return RoutingRegistry::Get().Make(engine)->Route(t, lids);
}

bool IsSwitch(const Topology& t, int n) {
  return t.nodes[n].type == NodeType::kSwitch;
}

// Switch-to-switch hop distances from `from` over the switch graph.
std::vector<int> SwitchBfs(const Topology& t, int from) {
  std::vector<int> d(t.nodes.size(), kInf);
  std::deque<int> q{from};
  d[from] = 0;
  while (!q.empty()) {
    int x = q.front();
    q.pop_front();
    for (int p = 1; p <= t.nodes[x].num_ports; ++p) {
      PortRef peer = t.Peer({x, p});
      if (!peer.valid() || !IsSwitch(t, peer.node) || d[peer.node] != kInf) continue;
      d[peer.node] = d[x] + 1;
      q.push_back(peer.node);
    }
  }
  return d;
}

// The ranking and direction the engine uses (routing::UpDownRanks, UpDownIsUp).
bool Up(const Topology& t, const std::vector<int>& rank, int from, int to) {
  return routing::UpDownIsUp(t, rank, from, to);
}

struct Case {
  std::string name;
  Topology topo;
};

std::vector<Case> AllTopologies() {
  return {
      {"TestBed", topology::TestBed(kQdr, kQdr)},
      {"KaryNTree(4,3)", topology::KaryNTree(4, 3, kQdr)},
      {"FatTree648", topology::FatTree648(kQdr)},
      {"Torus4x4", topology::Torus({4, 4}, 1, kQdr, true)},
      {"Dragonfly(4,2,2,9)", topology::Dragonfly(4, 2, 2, 9, kQdr)},
  };
}

// ---------------------------------------------------------------------------------------------
// LID assignment

TEST(LidMap, AssignsSwitchesThenCaPortsInTopologyOrderFromLid1) {
  Topology t = topology::TestBed(kQdr, kQdr);
  LidMap m = LidMap::Assign(t);
  // Nodes: S1, S2, H1..H7.
  EXPECT_EQ(m.lid[0][0], 1);
  EXPECT_EQ(m.lid[1][0], 2);
  for (int h = 1; h <= 7; ++h) EXPECT_EQ(m.lid[1 + h][1], 2 + h) << "H" << h;
  EXPECT_EQ(m.max_lid(), 9);
  EXPECT_EQ(m.endpoint_lids, (std::vector<uint16_t>{3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(m.owner[0].node, -1);  // LID 0 is reserved
  EXPECT_EQ(m.owner[2].node, 1);
  EXPECT_EQ(m.owner[2].port, 0);
  EXPECT_EQ(m.owner[9].node, 8);
  EXPECT_EQ(m.owner[9].port, 1);
  // Switch data ports get no LID of their own.
  for (int p = 1; p <= t.nodes[0].num_ports; ++p) EXPECT_EQ(m.lid[0][p], 0);
}

TEST(LidMap, UncabledCaPortsGetNoLid) {
  Topology t;
  int s = t.AddNode(NodeType::kSwitch, "S", 4);
  int a = t.AddNode(NodeType::kCa, "A", 2);
  int b = t.AddNode(NodeType::kCa, "B", 2);
  t.Connect({s, 1}, {a, 2}, kQdr);
  t.Connect({s, 2}, {b, 1}, kQdr);
  t.Connect({s, 3}, {b, 2}, kQdr);
  LidMap m = LidMap::Assign(t);
  EXPECT_EQ(m.lid[s][0], 1);
  EXPECT_EQ(m.lid[a][1], 0);
  EXPECT_EQ(m.lid[a][2], 2);
  EXPECT_EQ(m.lid[b][1], 3);
  EXPECT_EQ(m.lid[b][2], 4);
  EXPECT_EQ(m.endpoint_lids, (std::vector<uint16_t>{2, 3, 4}));
}

TEST(LidMap, FabricTooLargeForUnicastLidsIsRefusedNotWrapped) {
  // Unicast LIDs are 0x0001..0xBFFF (IBA 4.1.3); 70000 switches cannot all have one. Assign may
  // refuse (throw) or must hand out unique unicast LIDs; it must not wrap the 16-bit counter.
  Topology t = topology::Torus({70000}, 0, kQdr, false);
  LidMap m;
  try {
    m = LidMap::Assign(t);
  } catch (const std::exception&) {
    SUCCEED();
    return;
  }
  EXPECT_LE(m.owner.size() - 1, 0xBFFFu) << "LIDs beyond the unicast range were assigned";
  EXPECT_EQ(m.max_lid(), m.owner.size() - 1) << "max_lid() wrapped";
  std::vector<int> seen(0x10000, 0);
  int duplicates = 0;
  for (int s : t.Switches())
    if (seen[m.lid[s][0]]++) ++duplicates;
  EXPECT_EQ(duplicates, 0) << "switches share LIDs";
}

TEST(LidMap, LidsAreUniqueAndOwnersPointBack) {
  for (const Case& c : AllTopologies()) {
    LidMap m = LidMap::Assign(c.topo);
    ASSERT_EQ(m.owner.size(), c.topo.Switches().size() + c.topo.Cas().size() + 1) << c.name;
    for (uint16_t lid = 1; lid <= m.max_lid(); ++lid) {
      const LidMap::Owner& o = m.owner[lid];
      ASSERT_GE(o.node, 0) << c.name;
      EXPECT_EQ(m.lid[o.node][o.port], lid) << c.name;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Delivery and path length

TEST(MinHopRouting, DeliversEveryCaPairOnAShortestPath) {
  for (const Case& c : AllTopologies()) {
    SCOPED_TRACE(c.name);
    const Topology& t = c.topo;
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("minhop", t, lids);
    std::map<int, std::vector<int>> dist;  // per source switch
    int64_t paths = 0;
    WalkAllPairs(t, lids, r, [&](const CaPort& s, const CaPort& d, const std::vector<Hop>& hops) {
      std::vector<int> p = paths::SwitchesOf(hops);
      int from = p.front(), to = p.back();
      if (!dist.count(from)) dist[from] = SwitchBfs(t, from);
      ASSERT_EQ(static_cast<int>(p.size()) - 1, dist[from][to])
          << t.nodes[s.ref.node].name << " -> " << t.nodes[d.ref.node].name;
      ++paths;
    });
    size_t n = CaPorts(t, lids).size();
    EXPECT_EQ(paths, static_cast<int64_t>(n * (n - 1)));
  }
}

TEST(MinHopRouting, SwitchLidsAreReachableFromEverySwitch) {
  for (const Case& c : AllTopologies()) {
    SCOPED_TRACE(c.name);
    const Topology& t = c.topo;
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("minhop", t, lids);
    for (int s : t.Switches())
      for (int target : t.Switches()) {
        if (s == target) continue;
        uint16_t lid = lids.lid[target][0];
        // Follow the LFT switch to switch until the target switch is reached.
        int at = s, hops = 0;
        while (at != target && hops <= static_cast<int>(t.nodes.size())) {
          uint8_t port = r.lft.at(at)[lid];
          ASSERT_NE(port, kNoPort) << t.nodes[at].name << " LID " << lid;
          at = t.Peer({at, port}).node;
          ASSERT_GE(at, 0);
          ++hops;
        }
        EXPECT_EQ(hops, SwitchBfs(t, s)[target]);
      }
  }
}

TEST(UpDownRouting, DeliversEveryCaPairWithoutADownToUpTurn) {
  for (const Case& c : AllTopologies()) {
    SCOPED_TRACE(c.name);
    const Topology& t = c.topo;
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("updown", t, lids);
    std::vector<int> rank = routing::UpDownRanks(t);
    WalkAllPairs(t, lids, r, [&](const CaPort& s, const CaPort& d, const std::vector<Hop>& hops) {
      std::vector<int> p = paths::SwitchesOf(hops);
      bool gone_down = false;
      for (size_t i = 1; i < p.size(); ++i) {
        bool up = Up(t, rank, p[i - 1], p[i]);
        ASSERT_FALSE(gone_down && up)
            << t.nodes[s.ref.node].name << " -> " << t.nodes[d.ref.node].name << " turns up at "
            << t.nodes[p[i - 1]].name << " -> " << t.nodes[p[i]].name;
        if (!up) gone_down = true;
      }
    });
  }
}

TEST(UpDownRouting, FatTreePathsAreAlsoShortest) {
  // In a fat tree every shortest path is an up*/down* path, so nothing is lost by the rule.
  for (const Case& c : AllTopologies()) {
    if (c.name != "KaryNTree(4,3)" && c.name != "FatTree648" && c.name != "TestBed") continue;
    SCOPED_TRACE(c.name);
    const Topology& t = c.topo;
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route("updown", t, lids);
    std::map<int, std::vector<int>> dist;
    WalkAllPairs(t, lids, r, [&](const CaPort&, const CaPort&, const std::vector<Hop>& hops) {
      std::vector<int> p = paths::SwitchesOf(hops);
      int from = p.front(), to = p.back();
      if (!dist.count(from)) dist[from] = SwitchBfs(t, from);
      ASSERT_EQ(static_cast<int>(p.size()) - 1, dist[from][to]);
    });
  }
}

TEST(UpDownRouting, RanksFatTreeSpinesAsRoots) {
  Topology t = topology::FatTree648(kQdr);
  std::vector<int> rank = routing::UpDownRanks(t);
  for (int s : t.Switches()) {
    bool spine = t.nodes[s].name.rfind("Spine", 0) == 0;
    EXPECT_EQ(rank[s], spine ? 0 : 1) << t.nodes[s].name;
  }
  Topology k = topology::KaryNTree(4, 3, kQdr);
  std::vector<int> krank = routing::UpDownRanks(k);
  for (int s : k.Switches()) EXPECT_EQ(krank[s], k.nodes[s].name[1] - '0') << k.nodes[s].name;
}

// ---------------------------------------------------------------------------------------------
// Balance

// For each leaf of the 648-port fat tree, the remote hosts' LIDs spread over the leaf's 18
// uplinks (ports 19..36) with at most one destination of difference.
void CheckFatTree648Balance(const std::string& engine) {
  Topology t = topology::FatTree648(kQdr);
  LidMap lids = LidMap::Assign(t);
  RoutingResult r = Route(engine, t, lids);
  int leaves = 0;
  for (int leaf : t.Switches()) {
    if (t.nodes[leaf].name.rfind("Leaf", 0) != 0) continue;
    ++leaves;
    std::map<int, int> per_port;
    for (int p = 19; p <= 36; ++p) per_port[p] = 0;
    for (int c : t.Cas()) {
      if (t.Peer({c, 1}).node == leaf) continue;  // local host
      uint8_t port = r.lft.at(leaf)[lids.lid[c][1]];
      ASSERT_TRUE(per_port.count(port))
          << t.nodes[leaf].name << " sends a remote host to port " << int(port);
      ++per_port[port];
    }
    int lo = kInf, hi = 0, total = 0;
    for (auto [port, n] : per_port) {
      lo = std::min(lo, n);
      hi = std::max(hi, n);
      total += n;
    }
    EXPECT_EQ(total, 630) << t.nodes[leaf].name;
    EXPECT_LE(hi - lo, 1) << engine << ": " << t.nodes[leaf].name << " uplink loads " << lo << ".."
                          << hi;
  }
  EXPECT_EQ(leaves, 36);
}

TEST(MinHopRouting, FatTree648SpreadsRemoteHostsEvenlyOverTheUplinks) {
  CheckFatTree648Balance("minhop");
}

TEST(UpDownRouting, FatTree648SpreadsRemoteHostsEvenlyOverTheUplinks) {
  CheckFatTree648Balance("updown");
}

TEST(MinHopRouting, KaryNTreeSpreadsRemoteHostsEvenlyOverTheUplinks) {
  // 4-ary 3-tree: each leaf has 4 uplinks (ports 5..8) and 60 remote hosts.
  Topology t = topology::KaryNTree(4, 3, kQdr);
  LidMap lids = LidMap::Assign(t);
  RoutingResult r = Route("minhop", t, lids);
  for (int leaf : t.Switches()) {
    if (t.nodes[leaf].name.rfind("L2-", 0) != 0) continue;
    std::map<int, int> per_port;
    for (int c : t.Cas()) {
      if (t.Peer({c, 1}).node == leaf) continue;
      ++per_port[r.lft.at(leaf)[lids.lid[c][1]]];
    }
    ASSERT_EQ(per_port.size(), 4u) << t.nodes[leaf].name;
    for (auto [port, n] : per_port) {
      EXPECT_GE(port, 5);
      EXPECT_EQ(n, 15) << t.nodes[leaf].name << " port " << port;
    }
  }
}

TEST(Routing, LocalCaLidsPointAtTheCaPort) {
  for (const char* engine : {"minhop", "updown"}) {
    Topology t = topology::TestBed(kQdr, kQdr);
    LidMap lids = LidMap::Assign(t);
    RoutingResult r = Route(engine, t, lids);
    // H1..H3 on S1 ports 1..3, H4..H7 on S2 ports 1..4; the ISL is S1[4] - S2[5].
    const auto& s1 = r.lft.at(0);
    const auto& s2 = r.lft.at(1);
    for (int h = 1; h <= 7; ++h) {
      uint16_t lid = lids.lid[1 + h][1];
      EXPECT_EQ(s1[lid], h <= 3 ? h : 4) << engine << " S1 -> H" << h;
      EXPECT_EQ(s2[lid], h <= 3 ? 5 : h - 3) << engine << " S2 -> H" << h;
    }
  }
}

}  // namespace
}  // namespace ibemu::routing
