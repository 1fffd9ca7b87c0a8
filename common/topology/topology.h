// The fabric as cabled: nodes (switches and channel adapters), their ports, and the cables between
// them. Everything the emulator builds (devices, links, routes) is derived from this one value.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::topology {

enum class NodeType : uint8_t { kSwitch, kCa };

// What every emulated device answers in NodeInfo, and what the topology writer prints, so that a
// file written here describes the fabric as tools see it: Mellanox's OUI, the SwitchX (MT51000)
// and the ConnectX-5 (MT4119) that the verbs library presents as mlx5_0.
constexpr uint32_t kVendorId = 0x2c9;
constexpr uint16_t kSwitchDeviceId = 0xc738;
constexpr uint16_t kCaDeviceId = 0x1017;
// The most ports a node may have: NodeInfo.NumPorts is 8 bits and directed-route SMPs reserve
// port 255 (IBA 14.2.5).
constexpr int kMaxPorts = 254;

// Where a thing came from, so that errors name the file and line (DEVELOPERS.md: bad input).
struct SourceLocation {
  std::string file;  // empty for generated topologies
  int line = 0;
  std::string ToString() const;
};

struct PortRef {
  int node = -1;  // index into Topology::nodes
  int port = 0;   // 1-based physical port number
  bool valid() const { return node >= 0; }
  friend bool operator==(const PortRef& a, const PortRef& b) {
    return a.node == b.node && a.port == b.port;
  }
};

struct Cable {
  PortRef a, b;
  link::LinkRate rate;  // width and speed
  double length_m = 2.0;
  SourceLocation where;
};

struct Node {
  NodeType type = NodeType::kCa;
  std::string name;         // the quoted id in ibnetdiscover files ("S-0002c9..." or "H-host1")
  std::string description;  // NodeDescription; defaults to name
  uint64_t guid = 0;        // NodeGUID; generated from the index when the file has none
  int num_ports = 1;        // physical ports, numbered 1..num_ports (switch port 0 is internal)
  // peer[p] for p in 1..num_ports: the cable index plugged into port p, or -1 when unconnected.
  std::vector<int> cable_at;
  SourceLocation where;
};

struct Topology {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Cable> cables;

  int FindNode(const std::string& name) const;  // -1 when absent
  // The port at the other end of the cable plugged into `p`, or an invalid PortRef.
  PortRef Peer(PortRef p) const;
  const Cable* CableAt(PortRef p) const;
  std::vector<int> Switches() const;
  std::vector<int> Cas() const;
  int MaxSwitchPorts() const;  // the most ports of any switch (0 without switches)

  // Adds a node; returns its index. Ports start unconnected.
  int AddNode(NodeType type, std::string name, int num_ports, SourceLocation where = {});
  // Connects two ports with a cable. Throws TopologyError if either port is out of range or
  // already cabled to something else.
  void Connect(PortRef a, PortRef b, link::LinkRate rate, double length_m = 2.0,
               SourceLocation where = {});
  // Checks invariants: every cable has two ends that name each other, at least one node.
  void Validate() const;
};

// All topology errors carry "file:line: field: message" so a user can go straight to the line.
class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace ibemu::topology
