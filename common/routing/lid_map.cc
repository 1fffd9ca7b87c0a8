#include "common/routing/lid_map.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ibemu::routing {

LidMap LidMap::Assign(const topology::Topology& t) {
  LidMap m;
  m.lid.resize(t.nodes.size());
  m.owner.push_back({});  // LID 0 is reserved
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    const topology::Node& node = t.nodes[n];
    m.lid[n].assign(node.num_ports + 1, 0);
    if (node.type == topology::NodeType::kSwitch) {
      m.lid[n][0] = static_cast<uint16_t>(m.owner.size());
      m.owner.push_back({static_cast<int>(n), 0});
      continue;
    }
    for (int p = 1; p <= node.num_ports; ++p) {
      if (node.cable_at[p] < 0) continue;
      m.lid[n][p] = static_cast<uint16_t>(m.owner.size());
      m.endpoint_lids.push_back(m.lid[n][p]);
      m.owner.push_back({static_cast<int>(n), p});
    }
  }
  // Unicast LIDs are 0x0001..0xBFFF (IBA 4.1.3); beyond that lie the multicast LIDs.
  if (m.owner.size() - 1 > kMaxUnicastLid)
    throw std::invalid_argument("the fabric needs " + std::to_string(m.owner.size() - 1) +
                                " LIDs (one per switch and per CA port); unicast LIDs stop at " +
                                std::to_string(kMaxUnicastLid));
  return m;
}

LidMap LidMap::FromLids(const topology::Topology& t, std::vector<std::vector<uint16_t>> lid) {
  if (lid.size() != t.nodes.size())
    throw std::invalid_argument("LID table has " + std::to_string(lid.size()) + " nodes, the " +
                                "topology " + std::to_string(t.nodes.size()));
  LidMap m;
  uint16_t top = 0;
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    const topology::Node& node = t.nodes[n];
    if (lid[n].size() != static_cast<size_t>(node.num_ports) + 1)
      throw std::invalid_argument("LID table of " + node.name + " has " +
                                  std::to_string(lid[n].size()) + " entries for ports 0.." +
                                  std::to_string(node.num_ports));
    for (size_t p = 0; p < lid[n].size(); ++p) {
      uint16_t l = lid[n][p];
      if (l == 0) continue;
      if (l > kMaxUnicastLid)
        throw std::invalid_argument(node.name + " port " + std::to_string(p) + ": LID " +
                                    std::to_string(l) + " is not a unicast LID");
      if (node.type == topology::NodeType::kSwitch && p != 0)
        throw std::invalid_argument(node.name + " port " + std::to_string(p) +
                                    ": switch data ports have no LID");
      top = std::max(top, l);
    }
  }
  m.owner.assign(static_cast<size_t>(top) + 1, Owner{});
  for (size_t n = 0; n < t.nodes.size(); ++n)
    for (size_t p = 0; p < lid[n].size(); ++p) {
      uint16_t l = lid[n][p];
      if (l == 0) continue;
      if (m.owner[l].node >= 0)
        throw std::invalid_argument("LID " + std::to_string(l) + " given to both " +
                                    t.nodes[m.owner[l].node].name + " port " +
                                    std::to_string(m.owner[l].port) + " and " + t.nodes[n].name +
                                    " port " + std::to_string(p));
      m.owner[l] = {static_cast<int>(n), static_cast<int>(p)};
      if (t.nodes[n].type == topology::NodeType::kCa) m.endpoint_lids.push_back(l);
    }
  m.lid = std::move(lid);
  return m;
}

}  // namespace ibemu::routing
