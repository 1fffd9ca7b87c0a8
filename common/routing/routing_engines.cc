#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

#include "common/routing/engine_support.h"
#include "common/routing/routing_engine.h"

namespace ibemu::routing {

SwitchGraph::SwitchGraph(const topology::Topology& t) : topo(t), edges(t.nodes.size()) {
  for (size_t n = 0; n < t.nodes.size(); ++n)
    for (int p = 1; p <= t.nodes[n].num_ports; ++p) {
      topology::PortRef peer = t.Peer({static_cast<int>(n), p});
      if (peer.valid()) edges[n].push_back({p, peer.node, peer.port});
    }
}

namespace detail {

Target TargetOf(const SwitchGraph& g, const LidMap& lids, uint16_t lid) {
  if (lid >= lids.owner.size()) return {};
  const LidMap::Owner& o = lids.owner[lid];
  if (o.node < 0) return {};  // a hole between the LIDs an SM gave out
  if (g.IsSwitch(o.node)) return {o.node, 0};
  topology::PortRef peer = g.topo.Peer({o.node, o.port});
  if (!peer.valid() || !g.IsSwitch(peer.node)) return {};
  return {peer.node, peer.port};
}

std::vector<int> SwitchDistances(const SwitchGraph& g, int target,
                                 const std::function<bool(int from, int to)>& edge_ok) {
  std::vector<int> d(g.topo.nodes.size(), kInf);
  std::deque<int> q{target};
  d[target] = 0;
  while (!q.empty()) {
    int x = q.front();
    q.pop_front();
    for (const SwitchGraph::Edge& e : g.edges[x]) {
      // Edge e.peer -> x is the hop a packet takes toward the target.
      if (!g.IsSwitch(e.peer) || d[e.peer] != kInf || !edge_ok(e.peer, x)) continue;
      d[e.peer] = d[x] + 1;
      q.push_back(e.peer);
    }
  }
  return d;
}

std::vector<int> SwitchesByRank(const topology::Topology& t, const std::vector<int>& rank) {
  std::vector<int> order = t.Switches();
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return rank[a] != rank[b] ? rank[a] < rank[b] : t.nodes[a].guid < t.nodes[b].guid;
  });
  return order;
}

UpDownDistances UpDownTo(const SwitchGraph& g, const std::vector<int>& order, int target,
                         const std::function<bool(int from, int to)>& up) {
  UpDownDistances r;
  r.down = SwitchDistances(g, target, [&](int from, int to) { return !up(from, to); });
  r.any.assign(g.topo.nodes.size(), kInf);
  for (int s : order) {
    r.any[s] = r.down[s];
    if (r.any[s] != kInf) continue;
    for (const SwitchGraph::Edge& e : g.edges[s])
      if (g.IsSwitch(e.peer) && up(s, e.peer) && r.any[e.peer] != kInf)
        r.any[s] = std::min(r.any[s], r.any[e.peer] + 1);
  }
  return r;
}

}  // namespace detail

namespace {

using detail::BalancedLft;
using detail::kInf;
using detail::SwitchDistances;
using detail::Target;
using detail::TargetOf;

class MinHop : public RoutingEngine {
 public:
  RoutingResult Route(const topology::Topology& t, const LidMap& lids) override {
    SwitchGraph g(t);
    BalancedLft out(g, lids);
    const std::vector<int> switches = t.Switches();
    // The distances depend on the target switch only, and consecutive LIDs (the CAs of one
    // switch) usually share it.
    int d_for = -1;
    std::vector<int> d;
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      Target tg = TargetOf(g, lids, lid);
      if (tg.sw < 0) continue;
      if (tg.sw != d_for) {
        d = SwitchDistances(g, tg.sw, [](int, int) { return true; });
        d_for = tg.sw;
      }
      out.Set(tg.sw, lid, tg.ca_port_on_sw);
      for (int s : switches) {
        if (s == tg.sw || d[s] == kInf) continue;
        out.Choose(s, lid, [&](const SwitchGraph::Edge& e) {
          return g.IsSwitch(e.peer) && d[e.peer] == d[s] - 1;
        });
      }
    }
    return out.Take();
  }
};

// Up*/down*: switches are ranked by distance from the roots; a legal path goes up (toward lower
// rank) zero or more times, then only down. A switch that can reach the target going down always
// does, so a packet that has turned down never meets an LFT entry pointing up again: no
// cycle in the channel dependency graph, hence no deadlock on a single VL.
class UpDown : public RoutingEngine {
 public:
  RoutingResult Route(const topology::Topology& t, const LidMap& lids) override {
    SwitchGraph g(t);
    std::vector<int> rank = UpDownRanks(t);
    auto up = [&](int from, int to) { return UpDownIsUp(t, rank, from, to); };
    BalancedLft out(g, lids);
    std::vector<int> order = detail::SwitchesByRank(t, rank);
    // As in MinHop: found once per run of LIDs on the same switch.
    int dist_for = -1;
    detail::UpDownDistances dist;
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      Target tg = TargetOf(g, lids, lid);
      if (tg.sw < 0) continue;
      out.Set(tg.sw, lid, tg.ca_port_on_sw);
      // Up-neighbours have lower rank, so `order` (by rank) lists them first.
      if (tg.sw != dist_for) {
        dist = detail::UpDownTo(g, order, tg.sw, up);
        dist_for = tg.sw;
      }
      // Named references, not structured bindings: lambdas below capture them (clang 14).
      const std::vector<int>& down = dist.down;
      const std::vector<int>& any = dist.any;
      for (int s : order) {
        if (s == tg.sw || any[s] == kInf) continue;
        bool go_down = down[s] != kInf;
        out.Choose(s, lid, [&](const SwitchGraph::Edge& e) {
          if (!g.IsSwitch(e.peer)) return false;
          if (go_down) return !up(s, e.peer) && down[e.peer] == down[s] - 1;
          return up(s, e.peer) && any[e.peer] == any[s] - 1;
        });
      }
    }
    return out.Take();
  }
};

}  // namespace

std::vector<int> UpDownRanks(const topology::Topology& t) {
  SwitchGraph g(t);
  size_t n = t.nodes.size();
  std::vector<int> to_ca(n, kInf);
  std::deque<int> q;
  for (int c : t.Cas()) {
    to_ca[c] = 0;
    q.push_back(c);
  }
  while (!q.empty()) {
    int x = q.front();
    q.pop_front();
    for (const SwitchGraph::Edge& e : g.edges[x])
      if (g.IsSwitch(e.peer) && to_ca[e.peer] == kInf) {
        to_ca[e.peer] = to_ca[x] + 1;
        q.push_back(e.peer);
      }
  }
  int far = 0;
  for (int s : t.Switches())
    if (to_ca[s] != kInf) far = std::max(far, to_ca[s]);
  std::vector<int> rank(n, kInf);
  for (int s : t.Switches())
    if (to_ca[s] == far || to_ca[s] == kInf) {
      rank[s] = 0;
      q.push_back(s);
    }
  while (!q.empty()) {
    int x = q.front();
    q.pop_front();
    for (const SwitchGraph::Edge& e : g.edges[x])
      if (g.IsSwitch(e.peer) && rank[e.peer] == kInf) {
        rank[e.peer] = rank[x] + 1;
        q.push_back(e.peer);
      }
  }
  return rank;
}

bool UpDownIsUp(const topology::Topology& t, const std::vector<int>& rank, int from, int to) {
  if (rank[to] != rank[from]) return rank[to] < rank[from];
  return t.nodes[to].guid < t.nodes[from].guid;
}

void RegisterRoutingEngines() {
  auto& r = RoutingRegistry::Get();
  r.Add("minhop", "shortest paths, balanced by destinations per port (OpenSM min-hop style)",
        [] { return std::make_unique<MinHop>(); });
  r.Add("updown",
        "up*/down* from the switches farthest from CAs (fat-tree spines): deadlock-free on one VL",
        [] { return std::make_unique<UpDown>(); });
  r.Add("ftree",
        "fat tree, D-mod-K: up*/down* with the up port chosen by the destination's index, so "
        "each destination has one root",
        MakeFatTree);
  r.Add("dor",
        "dimension-order on tori and meshes (torus port layout); the dateline crossing of each "
        "ring goes on VL1 by SL, deadlock-free with the SL2VL ibemu-fabricmgr programs",
        MakeDor);
}

}  // namespace ibemu::routing
