#include "fabricmgr/router.h"

#include <set>
#include <stdexcept>

namespace ibemu::fabricmgr {
namespace {

link::LinkRate RateOf(const PortRecord& p) {
  using link::Speed;
  using link::Width;
  Width w = Width::k4x;
  switch (p.Field(mad::port_info::kLinkWidthActive)) {
    case 1:
      w = Width::k1x;
      break;
    case 4:
      w = Width::k8x;
      break;
    case 8:
      w = Width::k12x;
      break;
    default:
      break;
  }
  Speed s = Speed::kQDR;
  switch (p.Field(mad::port_info::kLinkSpeedExtActive)) {
    case 1:
      s = Speed::kFDR;
      break;
    case 2:
      s = Speed::kEDR;
      break;
    case 4:
      s = Speed::kHDR;
      break;
    case 8:
      s = Speed::kNDR;
      break;
    default:
      switch (p.Field(mad::port_info::kLinkSpeedActive)) {
        case 1:
          s = Speed::kSDR;
          break;
        case 2:
          s = Speed::kDDR;
          break;
        default:
          break;
      }
  }
  return link::LinkRate(w, s);
}

}  // namespace

topology::Topology ToTopology(const Subnet& s) {
  topology::Topology t;
  t.name = "discovered";
  std::set<std::string> names;
  for (const NodeRecord& r : s.nodes) {
    std::string name = r.name();
    if (!names.insert(name).second) name += "@" + GuidString(r.guid);
    int n = t.AddNode(r.is_switch() ? topology::NodeType::kSwitch : topology::NodeType::kCa, name,
                      r.num_ports);
    t.nodes[n].guid = r.guid;
    t.nodes[n].description = r.description;
  }
  for (size_t i = 0; i < s.nodes.size(); ++i)
    for (const PortRecord& p : s.nodes[i].ports) {
      if (!p.linked() || p.num == 0) continue;
      // Each cable once, from its lower (node, port) end.
      if (p.peer_node < static_cast<int>(i) ||
          (p.peer_node == static_cast<int>(i) && p.peer_port < p.num))
        continue;
      t.Connect({static_cast<int>(i), p.num}, {p.peer_node, p.peer_port}, RateOf(p));
    }
  return t;
}

routing::LidMap ToLidMap(const Subnet& s, const topology::Topology& t,
                         const std::map<uint64_t, uint16_t>& lids) {
  std::vector<std::vector<uint16_t>> table(s.nodes.size());
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeRecord& r = s.nodes[i];
    table[i].assign(static_cast<size_t>(r.num_ports) + 1, 0);
    for (int p : r.EndportNumbers())
      if (auto it = lids.find(r.ports[p].guid); it != lids.end()) table[i][p] = it->second;
  }
  return routing::LidMap::FromLids(t, std::move(table));
}

void CheckEngine(const std::string& engine) {
  routing::RegisterRoutingEngines();
  auto& registry = routing::RoutingRegistry::Get();
  if (!registry.Has(engine))
    throw std::invalid_argument("unknown routing engine '" + engine +
                                "' (known: " + registry.Names() + ")");
}

Routes ComputeRoutes(const Subnet& s, const std::map<uint64_t, uint16_t>& lids,
                     const std::string& engine, const std::string& fallback) {
  CheckEngine(engine);
  CheckEngine(fallback);
  auto& registry = routing::RoutingRegistry::Get();
  topology::Topology t = ToTopology(s);
  routing::LidMap m = ToLidMap(s, t, lids);
  Routes r;
  r.top_lid = m.max_lid();
  r.engine = engine;
  try {
    r.result = registry.Make(engine)->Route(t, m);
  } catch (const std::invalid_argument& e) {
    r.note = engine + ": " + e.what();
    r.engine = fallback;
    r.result = registry.Make(fallback)->Route(t, m);
  }
  return r;
}

}  // namespace ibemu::fabricmgr
