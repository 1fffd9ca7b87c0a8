// Fat-tree routing by D-mod-K (Zahavi, "D-Mod-K Routing Providing Non-Blocking Traffic for Shift
// Permutations on Real Life Fat Trees", 2010). Paths are up*/down* on the levels UpDownRanks
// finds (so deadlock-free on one VL), but a switch does not give a destination its least loaded
// up port: it gives the port named by the destination's index, one base-K digit per level
// (d mod K at the leaves, d / K mod K one level up, ...). All traffic to a destination then
// climbs to the same root and comes down one tree, and on a k-ary n-tree a shift permutation
// puts no two flows on one link. Going down, parallel cables are chosen by d mod K too.
#include <algorithm>
#include <vector>

#include "common/routing/engine_support.h"
#include "common/routing/routing_engine.h"

namespace ibemu::routing {
namespace {

using detail::kInf;

class FatTree : public RoutingEngine {
 public:
  RoutingResult Route(const topology::Topology& t, const LidMap& lids) override {
    SwitchGraph g(t);
    std::vector<int> rank = UpDownRanks(t);
    auto up = [&](int from, int to) { return UpDownIsUp(t, rank, from, to); };
    std::vector<int> order = detail::SwitchesByRank(t, rank);
    int leaf_rank = 0;
    for (int s : order)
      if (rank[s] != kInf) leaf_rank = std::max(leaf_rank, rank[s]);
    RoutingResult r;
    for (int s : order) r.lft[s].assign(lids.owner.size(), kNoPort);

    // A destination's index: its rank among the CA LIDs (or among the switch LIDs), in LID
    // order, so that LIDs given out with holes still count 0, 1, 2, ...
    std::vector<int64_t> index(lids.owner.size(), 0);
    int64_t cas = 0, switches = 0;
    for (size_t lid = 1; lid < lids.owner.size(); ++lid) {
      int n = lids.owner[lid].node;
      if (n >= 0) index[lid] = g.IsSwitch(n) ? switches++ : cas++;
    }

    // The eligible ports of every switch depend on the destination's switch only; consecutive
    // LIDs (the CAs of one leaf) share it, so they are found once per run of such LIDs.
    std::vector<std::vector<uint8_t>> eligible(t.nodes.size());
    std::vector<char> goes_down(t.nodes.size(), 0);
    std::vector<std::vector<uint8_t>*> lft(t.nodes.size(), nullptr);
    for (int s : order) lft[s] = &r.lft[s];
    int eligible_for = -1;
    for (uint16_t lid = 1; lid <= lids.max_lid(); ++lid) {
      detail::Target tg = detail::TargetOf(g, lids, lid);
      if (tg.sw < 0) continue;
      (*lft[tg.sw])[lid] = static_cast<uint8_t>(tg.ca_port_on_sw);
      if (tg.sw != eligible_for) {
        eligible_for = tg.sw;
        // Named references, not structured bindings: lambdas below capture them (clang 14).
        detail::UpDownDistances dist = detail::UpDownTo(g, order, tg.sw, up);
        const std::vector<int>& down = dist.down;
        const std::vector<int>& any = dist.any;
        for (int s : order) {
          eligible[s].clear();
          if (s == tg.sw || any[s] == kInf) continue;
          bool go_down = down[s] != kInf;
          goes_down[s] = go_down;
          for (const SwitchGraph::Edge& e : g.edges[s]) {  // in port order
            if (!g.IsSwitch(e.peer)) continue;
            bool ok = go_down ? !up(s, e.peer) && down[e.peer] == down[s] - 1
                              : up(s, e.peer) && any[e.peer] == any[s] - 1;
            if (ok) eligible[s].push_back(static_cast<uint8_t>(e.port));
          }
        }
      }
      for (int s : order) {
        const std::vector<uint8_t>& ports = eligible[s];
        if (s == tg.sw || ports.empty()) continue;
        int64_t k = static_cast<int64_t>(ports.size());
        int64_t digit = index[lid];
        if (!goes_down[s]) {
          // Height above the leaves: the digit of the destination index this level uses.
          for (int h = leaf_rank - rank[s]; h > 0 && digit > 0; --h) digit /= k;
        }
        (*lft[s])[lid] = ports[static_cast<size_t>(digit % k)];
      }
    }
    return r;
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> MakeFatTree() {
  return std::make_unique<FatTree>();
}

}  // namespace ibemu::routing
