// The subnet as the SM discovered it: every node with its NodeInfo, NodeDescription, SwitchInfo
// and the PortInfo of its ports, the directed route that reaches it, and the cables between
// ports. Attribute contents are kept as the SMA sent them and read through common/mad's fields.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/mad/smp_attributes.h"
#include "fabricmgr/mad_port.h"

namespace ibemu::fabricmgr {

struct PortRecord {
  int num = 0;
  bool known = false;  // PortInfo was read
  SmpData info{};      // PortInfo, as last read or as echoed by our last Set
  uint64_t guid = 0;   // CA ports and switch port 0
  int peer_node = -1;  // the node and port at the other end of the cable
  int peer_port = 0;

  uint64_t Field(const mad::Field& f) const { return mad::Get(info.data(), f); }
  uint8_t state() const { return static_cast<uint8_t>(Field(mad::port_info::kPortState)); }
  uint8_t phys() const { return static_cast<uint8_t>(Field(mad::port_info::kPortPhysicalState)); }
  uint16_t lid() const { return static_cast<uint16_t>(Field(mad::port_info::kLid)); }
  bool linked() const { return peer_node >= 0; }
};

struct NodeRecord {
  uint64_t guid = 0;
  uint8_t type = 0;
  int num_ports = 0;
  std::string description;
  SmpData node_info{};
  SmpData switch_info{};      // switches only
  std::vector<uint8_t> path;  // directed route from the SM's port
  int entry_port = 0;         // the port that route enters by: the one a CA's SMA calls "this port"
  std::vector<PortRecord> ports;  // [0..num_ports]; port 0 only means something on switches

  bool is_switch() const { return type == mad::node_info::kTypeSwitch; }
  // The first word of the NodeDescription ("H1" of "H1 mlx4_0"), or the GUID when empty.
  std::string name() const;
  // Ports with a LID of their own: switch port 0, or every cabled CA port.
  std::vector<int> EndportNumbers() const;
};

struct Subnet {
  std::vector<NodeRecord> nodes;
  std::map<uint64_t, int> by_guid;  // NodeGUID -> index
  int sm_node = -1;                 // the SM's own CA
  int sm_port = 0;

  int Find(uint64_t node_guid) const {
    auto it = by_guid.find(node_guid);
    return it == by_guid.end() ? -1 : it->second;
  }
  int switches() const;
  int links() const;  // cables, each counted once
  // What routing depends on, as text: the nodes by GUID and every cable between them. Two
  // discoveries with the same key route the same.
  std::string TopologyKey() const;
  // Lookup by name (first word of the NodeDescription), full description or GUID ("0x...").
  int FindByName(const std::string& name) const;
};

// "4x", "QDR" and the like, from PortInfo's encodings.
std::string WidthName(uint8_t link_width_active);
std::string SpeedName(uint8_t link_speed_active, uint8_t link_speed_ext_active);
std::string StateName(uint8_t port_state);
std::string PhysName(uint8_t phys_state);
std::string GuidString(uint64_t guid);
// A GUID as a user writes it (0x hex or decimal, the whole text); false if it is not one.
bool ParseGuid(const std::string& text, uint64_t* guid);

}  // namespace ibemu::fabricmgr
