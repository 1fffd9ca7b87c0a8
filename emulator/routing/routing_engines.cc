#include <algorithm>
#include <deque>
#include <functional>
#include <limits>

#include "emulator/policy/builtin.h"
#include "emulator/routing/routing_engine.h"

namespace ibemu::routing {

SwitchGraph::SwitchGraph(const topology::Topology& t) : topo(t), edges(t.nodes.size()) {
  for (size_t n = 0; n < t.nodes.size(); ++n)
    for (int p = 1; p <= t.nodes[n].num_ports; ++p) {
      topology::PortRef peer = t.Peer({static_cast<int>(n), p});
      if (peer.valid()) edges[n].push_back({p, peer.node, peer.port});
    }
}

namespace {

constexpr int kInf = std::numeric_limits<int>::max() / 2;

// The switch a destination LID hangs off, and the hop count to it (0 for a switch's own LID).
struct Target {
  int sw = -1;
  int ca_port_on_sw = 0;  // the switch port cabled to the CA, for CA LIDs
};

Target TargetOf(const SwitchGraph& g, const LidMap& lids, uint16_t lid) {
  const LidMap::Owner& o = lids.owner[lid];
  if (g.IsSwitch(o.node)) return {o.node, 0};
  topology::PortRef peer = g.topo.Peer({o.node, o.port});
  if (!peer.valid() || !g.IsSwitch(peer.node)) return {};
  return {peer.node, peer.port};
}

// Every engine ends the same way: a switch picks, among the ports its rule allows, the one that
// carries the fewest destinations so far (lowest port number on ties), as OpenSM's min-hop does.
class BalancedLft {
 public:
  BalancedLft(const SwitchGraph& g, const LidMap& lids) : g_(g) {
    for (int s : g.topo.Switches()) {
      r_.lft[s].assign(lids.owner.size(), kNoPort);
      load_[s].assign(g.topo.nodes[s].num_ports + 1, 0);
    }
  }
  template <typename Allowed>
  void Choose(int s, uint16_t lid, Allowed allowed) {
    int best = -1;
    for (const SwitchGraph::Edge& e : g_.edges[s])
      if (allowed(e) && (best < 0 || load_[s][e.port] < load_[s][best])) best = e.port;
    if (best < 0) return;
    r_.lft[s][lid] = static_cast<uint8_t>(best);
    ++load_[s][best];
  }
  void Set(int s, uint16_t lid, int port) { r_.lft[s][lid] = static_cast<uint8_t>(port); }
  RoutingResult Take() { return std::move(r_); }

 private:
  const SwitchGraph& g_;
  RoutingResult r_;
  std::map<int, std::vector<int>> load_;
};

// Hop distances over switches only (CAs do not forward), from the target switch.
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

class MinHop : public RoutingEngine {
 public:
  RoutingResult Route(const topology::Topology& t, const LidMap& lids) override {
    SwitchGraph g(t);
    BalancedLft out(g, lids);
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      Target tg = TargetOf(g, lids, lid);
      if (tg.sw < 0) continue;
      auto d = SwitchDistances(g, tg.sw, [](int, int) { return true; });
      out.Set(tg.sw, lid, tg.ca_port_on_sw);
      for (int s : t.Switches()) {
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
    std::vector<int> order = t.Switches();
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return rank[a] != rank[b] ? rank[a] < rank[b] : t.nodes[a].guid < t.nodes[b].guid;
    });
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      Target tg = TargetOf(g, lids, lid);
      if (tg.sw < 0) continue;
      out.Set(tg.sw, lid, tg.ca_port_on_sw);
      // down[s]: hops from s to the target moving only down.
      auto down = SwitchDistances(g, tg.sw, [&](int from, int to) { return !up(from, to); });
      // any[s]: hops on a legal up*/down* path; up-neighbours have lower rank, so a pass in rank
      // order sees them first.
      std::vector<int> any(t.nodes.size(), kInf);
      for (int s : order) {
        any[s] = down[s];
        if (any[s] != kInf) continue;
        for (const SwitchGraph::Edge& e : g.edges[s])
          if (g.IsSwitch(e.peer) && up(s, e.peer) && any[e.peer] != kInf)
            any[s] = std::min(any[s], any[e.peer] + 1);
      }
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

}  // namespace ibemu::routing

namespace ibemu::policy {

void RegisterRoutingEngines() {
  using namespace routing;
  auto& r = RoutingRegistry::Get();
  r.Add("minhop", "shortest paths, balanced by destinations per port (OpenSM min-hop style)",
        [] { return std::make_unique<MinHop>(); });
  r.Add("updown",
        "up*/down* from the switches farthest from CAs (fat-tree spines): deadlock-free on one VL",
        [] { return std::make_unique<UpDown>(); });
}

}  // namespace ibemu::policy
