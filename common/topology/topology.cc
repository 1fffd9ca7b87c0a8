#include "common/topology/topology.h"

#include <algorithm>

namespace ibemu::topology {

std::string SourceLocation::ToString() const {
  if (file.empty()) return "<generated>";
  return file + ":" + std::to_string(line);
}

int Topology::FindNode(const std::string& n) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == n) return static_cast<int>(i);
  return -1;
}

const Cable* Topology::CableAt(PortRef p) const {
  if (p.node < 0 || p.node >= static_cast<int>(nodes.size())) return nullptr;
  const Node& n = nodes[p.node];
  if (p.port < 1 || p.port > n.num_ports) return nullptr;
  int c = n.cable_at[p.port];
  return c < 0 ? nullptr : &cables[c];
}

PortRef Topology::Peer(PortRef p) const {
  const Cable* c = CableAt(p);
  if (!c) return {};
  return c->a == p ? c->b : c->a;
}

std::vector<int> Topology::Switches() const {
  std::vector<int> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].type == NodeType::kSwitch) r.push_back(static_cast<int>(i));
  return r;
}

int Topology::MaxSwitchPorts() const {
  int most = 0;
  for (const Node& n : nodes)
    if (n.type == NodeType::kSwitch) most = std::max(most, n.num_ports);
  return most;
}

std::vector<int> Topology::Cas() const {
  std::vector<int> r;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].type == NodeType::kCa) r.push_back(static_cast<int>(i));
  return r;
}

int Topology::AddNode(NodeType type, std::string n, int num_ports, SourceLocation where) {
  Node node;
  node.type = type;
  node.description = n;
  node.name = std::move(n);
  node.num_ports = num_ports;
  node.cable_at.assign(num_ports + 1, -1);
  node.guid = (type == NodeType::kSwitch ? 0x0002c90200000000ull : 0x0002c90300000000ull) +
              (nodes.size() + 1) * 0x100;
  node.where = std::move(where);
  nodes.push_back(std::move(node));
  return static_cast<int>(nodes.size() - 1);
}

void Topology::Connect(PortRef a, PortRef b, link::LinkRate rate, double length_m,
                       SourceLocation where) {
  auto check = [&](PortRef p) {
    if (p.node < 0 || p.node >= static_cast<int>(nodes.size()))
      throw TopologyError(where.ToString() + ": node: no node with index " +
                          std::to_string(p.node));
    Node& n = nodes[p.node];
    if (p.port < 1 || p.port > n.num_ports)
      throw TopologyError(where.ToString() + ": port: port " + std::to_string(p.port) + " of \"" +
                          n.name + "\" is out of range 1.." + std::to_string(n.num_ports));
    if (n.cable_at[p.port] >= 0)
      throw TopologyError(where.ToString() + ": port: port " + std::to_string(p.port) + " of \"" +
                          n.name + "\" is already cabled");
  };
  check(a);
  check(b);
  if (a == b)
    throw TopologyError(where.ToString() + ": port: a cable cannot loop back to its own port");
  Cable c{a, b, rate, length_m, std::move(where)};
  int idx = static_cast<int>(cables.size());
  cables.push_back(std::move(c));
  nodes[a.node].cable_at[a.port] = idx;
  nodes[b.node].cable_at[b.port] = idx;
}

void Topology::Validate() const {
  if (nodes.empty()) throw TopologyError(name + ": topology has no nodes");
  for (size_t i = 0; i < cables.size(); ++i) {
    const Cable& c = cables[i];
    if (nodes[c.a.node].cable_at[c.a.port] != static_cast<int>(i) ||
        nodes[c.b.node].cable_at[c.b.port] != static_cast<int>(i))
      throw TopologyError(c.where.ToString() + ": cable: inconsistent cable table");
  }
}

}  // namespace ibemu::topology
