#include "emulator/routing/lid_map.h"

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

}  // namespace ibemu::routing
