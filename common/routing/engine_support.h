// What the routing engines share: where a destination LID hangs off the switch graph, hop
// distances over switches, and the LFT builder that balances destinations over equal ports.
#pragma once
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <vector>

#include "common/routing/routing_engine.h"

namespace ibemu::routing::detail {

constexpr int kInf = std::numeric_limits<int>::max() / 2;

// The switch a destination LID hangs off: the switch itself for its own LID (port 0), the switch
// a CA port is cabled to otherwise. sw < 0 for a LID nobody owns or a CA not cabled to a switch.
struct Target {
  int sw = -1;
  int ca_port_on_sw = 0;  // the switch port cabled to the CA, for CA LIDs
};
Target TargetOf(const SwitchGraph& g, const LidMap& lids, uint16_t lid);

// Hop distances over switches only (CAs do not forward), from every switch to `target`, using
// only the hops from -> to that edge_ok allows.
std::vector<int> SwitchDistances(const SwitchGraph& g, int target,
                                 const std::function<bool(int from, int to)>& edge_ok);

// The switches by up*/down* rank (roots first), ties by GUID: an order in which every switch's
// up-neighbours come before it.
std::vector<int> SwitchesByRank(const topology::Topology& t, const std::vector<int>& rank);

// up*/down* distances to `target`: down[s] moving only down, any[s] on any legal path (up, then
// down). `order` lists the switches with up-neighbours before the switches below them.
struct UpDownDistances {
  std::vector<int> down, any;
};
UpDownDistances UpDownTo(const SwitchGraph& g, const std::vector<int>& order, int target,
                         const std::function<bool(int from, int to)>& up);

// Every engine ends the same way: a switch picks, among the ports its rule allows, the one that
// carries the fewest destinations so far (lowest port number on ties), as OpenSM's min-hop does.
class BalancedLft {
 public:
  BalancedLft(const SwitchGraph& g, const LidMap& lids)
      : g_(g), load_(g.topo.nodes.size()), lft_(g.topo.nodes.size(), nullptr) {
    for (int s : g.topo.Switches()) {
      r_.lft[s].assign(lids.owner.size(), kNoPort);
      lft_[s] = &r_.lft[s];
      load_[s].assign(g.topo.nodes[s].num_ports + 1, 0);
    }
  }
  // Called for every (switch, LID) pair: on fabrics of thousands of switches this is most of the
  // routing time, so it indexes by node, not through the result's map.
  template <typename Allowed>
  void Choose(int s, uint16_t lid, Allowed allowed) {
    std::vector<int>& load = load_[s];
    int best = -1;
    for (const SwitchGraph::Edge& e : g_.edges[s])
      if (allowed(e) && (best < 0 || load[e.port] < load[best])) best = e.port;
    if (best < 0) return;
    (*lft_[s])[lid] = static_cast<uint8_t>(best);
    ++load[best];
  }
  void Set(int s, uint16_t lid, int port) { (*lft_[s])[lid] = static_cast<uint8_t>(port); }
  RoutingResult Take() { return std::move(r_); }

 private:
  const SwitchGraph& g_;
  RoutingResult r_;
  std::vector<std::vector<int>> load_;      // [node][port] -> LIDs routed out of it
  std::vector<std::vector<uint8_t>*> lft_;  // [node] -> r_.lft[node] (map nodes are stable)
};

}  // namespace ibemu::routing::detail
