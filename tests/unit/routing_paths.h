// Following a routing engine's LFTs from CA to CA, for the routing tests: where a packet goes,
// hop by hop, and every CA pair at once.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/routing/lid_map.h"
#include "common/routing/routing_engine.h"

namespace ibemu::routing::paths {

// One hop of a packet: the switch and the port it leaves by.
struct Hop {
  int sw, out;
};

// The hops from CA port `src` to `dlid` through the LFTs; empty with `why` when it is dropped or
// loops.
inline std::vector<Hop> Walk(const topology::Topology& t, const LidMap& lids,
                             const RoutingResult& r, topology::PortRef src, uint16_t dlid,
                             std::string* why) {
  std::vector<Hop> hops;
  topology::PortRef at = t.Peer(src);
  while (true) {
    if (!at.valid()) {
      *why = "unconnected port";
      return {};
    }
    if (t.nodes[at.node].type != topology::NodeType::kSwitch) {
      const LidMap::Owner& o = lids.owner[dlid];
      if (at.node == o.node && at.port == o.port) return hops;
      *why = "delivered to the wrong CA " + t.nodes[at.node].name;
      return {};
    }
    if (hops.size() > t.nodes.size()) {
      *why = "loop";
      return {};
    }
    auto it = r.lft.find(at.node);
    uint8_t port = it == r.lft.end() || dlid >= it->second.size() ? kNoPort : it->second[dlid];
    if (port == kNoPort || port == 0 || port > t.nodes[at.node].num_ports) {
      *why = "LFT of " + t.nodes[at.node].name + " has no port for LID " + std::to_string(dlid);
      return {};
    }
    hops.push_back({at.node, port});
    at = t.Peer({at.node, port});
  }
}

// The switches a path visits, in order.
inline std::vector<int> SwitchesOf(const std::vector<Hop>& hops) {
  std::vector<int> v;
  for (const Hop& h : hops) v.push_back(h.sw);
  return v;
}

struct CaPort {
  topology::PortRef ref;
  uint16_t lid;
};

inline std::vector<CaPort> CaPorts(const topology::Topology& t, const LidMap& lids) {
  std::vector<CaPort> v;
  for (int c : t.Cas())
    for (int p = 1; p <= t.nodes[c].num_ports; ++p)
      if (lids.lid[c][p] != 0) v.push_back({{c, p}, lids.lid[c][p]});
  return v;
}

// Walks every CA-to-CA pair and calls `check(src, dst, hops)` on each delivered path; a pair
// that is not delivered fails the test.
template <typename Check>
void WalkAllPairs(const topology::Topology& t, const LidMap& lids, const RoutingResult& r,
                  Check check) {
  std::vector<CaPort> cas = CaPorts(t, lids);
  ASSERT_GE(cas.size(), 2u);
  for (const CaPort& s : cas)
    for (const CaPort& d : cas) {
      if (s.lid == d.lid) continue;
      std::string why;
      std::vector<Hop> path = Walk(t, lids, r, s.ref, d.lid, &why);
      ASSERT_FALSE(path.empty()) << t.name << ": " << t.nodes[s.ref.node].name << " -> LID "
                                 << d.lid << ": " << why;
      check(s, d, path);
    }
}

}  // namespace ibemu::routing::paths
