#include "emulator/routing/lid_map.h"

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
  return m;
}

}  // namespace ibemu::routing
