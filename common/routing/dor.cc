// Dimension-order routing (DOR) on tori and meshes: a packet corrects its coordinates one
// dimension at a time, lowest dimension first, each along the shorter way round its ring (the +
// way on a tie). Without wrap-around (a mesh) that is deadlock-free on one VL. On a torus each
// ring is a cycle, so, in the spirit of OpenSM's torus-2QoS, the ring's dateline (the cable between
// coordinate size-1 and 0) decides the VL: a path that crosses the dateline of a ring travels
// that whole ring on VL1, every other path on VL0. The source says which by the SL (bit i set:
// the path crosses the dateline of the i-th wrapped dimension), and every switch maps (SL, output
// port) to the VL. On one ring and one VL, every path's arc then either contains the dateline
// cable (VL1) or does not (VL0), and no arc is longer than half the ring, so the arcs of a VL
// never cover the whole ring: no cycle of channel dependencies, and dimensions are visited in
// order, so none across rings either.
//
// The layout is read from the port numbers, as the torus generator lays them out: the lowest
// port cabled to another switch, F, is the - port of dimension 0, and dimension d uses ports
// F+2d (toward coordinate c-1) and F+2d+1 (toward c+1); ports below F go to hosts. Coordinates
// count from the switch with the lowest GUID (0 in every dimension of a torus).
#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/routing/engine_support.h"
#include "common/routing/routing_engine.h"

namespace ibemu::routing {
namespace {

struct Layout {
  int first_port = 0;
  int dims = 0;
  std::vector<int> size;
  std::vector<bool> closed;             // the ring's last switch is cabled to its first
  std::vector<bool> wrap;               // closed and of size >= 3: a cycle a path can go round
  std::vector<std::vector<int>> coord;  // [node][dimension], switches only
  std::vector<int> sl_bit;              // [dimension]: the SL bit of a wrapped ring, or -1
};

[[noreturn]] void Fail(const std::string& what) {
  throw std::invalid_argument("dor: " + what);
}

int PortOf(const Layout& l, int d, bool plus) {
  return l.first_port + 2 * d + (plus ? 1 : 0);
}

// The switch through `port` of `s`, or -1.
int Through(const SwitchGraph& g, int s, int port) {
  for (const SwitchGraph::Edge& e : g.edges[s])
    if (e.port == port) return g.IsSwitch(e.peer) ? e.peer : -1;
  return -1;
}

Layout FindLayout(const SwitchGraph& g) {
  const topology::Topology& t = g.topo;
  std::vector<int> switches = t.Switches();
  if (switches.empty()) Fail("no switches");
  Layout l;
  l.first_port = std::numeric_limits<int>::max();
  for (int s : switches)
    for (const SwitchGraph::Edge& e : g.edges[s])
      if (g.IsSwitch(e.peer)) l.first_port = std::min(l.first_port, e.port);
  l.coord.assign(t.nodes.size(), {});
  if (l.first_port == std::numeric_limits<int>::max()) {  // one switch: nothing to order
    l.first_port = 0;
    for (int s : switches) l.coord[s] = {};
    return l;
  }
  for (int s : switches)
    for (const SwitchGraph::Edge& e : g.edges[s]) {
      if (!g.IsSwitch(e.peer)) continue;
      int rel = e.port - l.first_port, d = rel / 2;
      bool plus = rel % 2 == 1;
      if (e.peer_port != PortOf(l, d, !plus))
        Fail(t.nodes[s].name + " port " + std::to_string(e.port) + " is cabled to " +
             t.nodes[e.peer].name + " port " + std::to_string(e.peer_port) + ", expected port " +
             std::to_string(PortOf(l, d, !plus)) +
             " (a torus cable joins the + port of one switch to the - port of the next)");
      l.dims = std::max(l.dims, d + 1);
    }
  // Ring sizes, walking from the origin: back at the origin means a closed ring. The origin is
  // the switch with the lowest GUID, so the datelines do not depend on where the SM runs.
  const int origin = *std::min_element(switches.begin(), switches.end(), [&](int a, int b) {
    return t.nodes[a].guid < t.nodes[b].guid;
  });
  const int limit = static_cast<int>(switches.size());
  l.size.assign(l.dims, 1);
  l.wrap.assign(l.dims, false);
  l.closed.assign(l.dims, false);
  std::vector<int> below(l.dims, 0);  // steps the origin is above the ring's first switch
  for (int d = 0; d < l.dims; ++d) {
    int steps = 0;  // switches after the origin going +
    bool closed = false;
    for (int at = origin;;) {
      int next = Through(g, at, PortOf(l, d, true));
      if (next < 0) break;
      if (next == origin) {
        closed = true;
        break;
      }
      if (++steps > limit) Fail("dimension " + std::to_string(d) + " loops without closing");
      at = next;
    }
    if (closed) {
      l.size[d] = steps + 1;
      l.closed[d] = true;
      l.wrap[d] = l.size[d] >= 3;
      continue;
    }
    int minus = 0;
    for (int at = Through(g, origin, PortOf(l, d, false)); at >= 0;
         at = Through(g, at, PortOf(l, d, false)))
      if (++minus > limit) Fail("dimension " + std::to_string(d) + " loops without closing");
    l.size[d] = steps + minus + 1;
    below[d] = minus;
  }
  // Coordinates by a walk over the switch cables, checked wherever two ways meet.
  std::vector<int> start(l.dims);
  for (int d = 0; d < l.dims; ++d) start[d] = below[d];
  l.coord[origin] = start;
  std::deque<int> q{origin};
  std::vector<bool> seen(t.nodes.size(), false);
  seen[origin] = true;
  while (!q.empty()) {
    int s = q.front();
    q.pop_front();
    for (const SwitchGraph::Edge& e : g.edges[s]) {
      if (!g.IsSwitch(e.peer)) continue;
      int rel = e.port - l.first_port, d = rel / 2;
      std::vector<int> c = l.coord[s];
      c[d] += rel % 2 == 1 ? 1 : -1;
      if (l.closed[d]) c[d] = (c[d] + l.size[d]) % l.size[d];
      if (c[d] < 0 || c[d] >= l.size[d])
        Fail(t.nodes[e.peer].name + " lies outside dimension " + std::to_string(d) + " (size " +
             std::to_string(l.size[d]) + ")");
      if (seen[e.peer]) {
        if (l.coord[e.peer] != c)
          Fail(t.nodes[e.peer].name + " is reached at two different coordinates");
        continue;
      }
      seen[e.peer] = true;
      l.coord[e.peer] = c;
      q.push_back(e.peer);
    }
  }
  std::map<std::vector<int>, int> at;
  for (int s : switches) {
    if (!seen[s]) continue;
    auto [it, fresh] = at.emplace(l.coord[s], s);
    if (!fresh) Fail(t.nodes[s].name + " and " + t.nodes[it->second].name + " share coordinates");
  }
  int bits = 0;
  l.sl_bit.assign(l.dims, -1);
  for (int d = 0; d < l.dims; ++d)
    if (l.wrap[d]) {
      if (bits == 4) Fail("more than 4 wrapped dimensions: not enough SL bits");
      l.sl_bit[d] = bits++;
    }
  return l;
}

class Dor : public RoutingEngine {
 public:
  RoutingResult Route(const topology::Topology& t, const LidMap& lids) override {
    SwitchGraph g(t);
    Layout l = FindLayout(g);
    RoutingResult r;
    std::vector<int> switches = t.Switches();
    for (int s : switches) {
      r.lft[s].assign(lids.owner.size(), kNoPort);
      r.path_sl[s].assign(lids.owner.size(), 0);
    }
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      detail::Target tg = detail::TargetOf(g, lids, lid);
      if (tg.sw < 0 || l.coord[tg.sw].size() != static_cast<size_t>(l.dims)) continue;
      r.lft[tg.sw][lid] = static_cast<uint8_t>(tg.ca_port_on_sw);
      const std::vector<int>& ct = l.coord[tg.sw];
      for (int s : switches) {
        const std::vector<int>& cs = l.coord[s];
        if (s == tg.sw || cs.size() != ct.size()) continue;
        uint8_t sl = 0;
        int first_port = -1;
        for (int d = 0; d < l.dims; ++d) {
          if (cs[d] == ct[d]) continue;
          bool plus = ct[d] > cs[d];
          if (l.wrap[d]) {
            int up = (ct[d] - cs[d] + l.size[d]) % l.size[d];
            plus = up <= l.size[d] - up;
          }
          if (first_port < 0) {
            first_port = PortOf(l, d, plus);
            // A ring with a missing cable: go the other way round rather than nowhere.
            if (Through(g, s, first_port) < 0 && l.wrap[d]) first_port = PortOf(l, d, !plus);
          }
          if (l.wrap[d] && (plus ? cs[d] > ct[d] : cs[d] < ct[d]))
            sl = static_cast<uint8_t>(sl | 1 << l.sl_bit[d]);
        }
        if (first_port >= 0 && Through(g, s, first_port) >= 0)
          r.lft[s][lid] = static_cast<uint8_t>(first_port);
        r.path_sl[s][lid] = sl;
      }
    }
    bool any_wrap = std::find(l.wrap.begin(), l.wrap.end(), true) != l.wrap.end();
    r.data_vls = any_wrap ? 2 : 1;
    for (int s : switches) {
      auto& table = r.sl2vl[s];
      table.assign(static_cast<size_t>(t.nodes[s].num_ports) + 1, {});
      for (int d = 0; d < l.dims; ++d) {
        if (!l.wrap[d]) continue;
        for (bool plus : {false, true}) {
          int p = PortOf(l, d, plus);
          if (p > t.nodes[s].num_ports) continue;
          for (int sl = 0; sl < 16; ++sl)
            table[p][sl] = static_cast<uint8_t>(sl >> l.sl_bit[d] & 1);
        }
      }
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> MakeDor() {
  return std::make_unique<Dor>();
}

}  // namespace ibemu::routing
