// Routing engines compute every switch's linear forwarding table from the topology. The subnet
// manager (fabricmgr/) reuses them, so they take a topology and a LID map and nothing else.
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/policy/registry.h"
#include "common/routing/lid_map.h"
#include "common/topology/topology.h"

namespace ibemu::routing {

constexpr uint8_t kNoPort = 0xFF;

struct RoutingResult {
  std::map<int, std::vector<uint8_t>> lft;  // switch node index -> [LID] -> port

  // Engines that need more than one VL to be deadlock-free (dor on a torus) also say how SLs map
  // to VLs, and which SL a path must carry; the others leave these empty and one VL suffices.
  int data_vls = 1;  // VLs needed on switch-to-switch links
  // [switch][output port][SL] -> VL, for packets from any input port.
  std::map<int, std::vector<std::array<uint8_t, 16>>> sl2vl;
  // [source switch][destination LID] -> the SL a source attached to that switch must use (the
  // SL an SA PathRecord would give).
  std::map<int, std::vector<uint8_t>> path_sl;
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual RoutingResult Route(const topology::Topology& t, const LidMap& lids) = 0;
};

using RoutingRegistry = policy::Registry<RoutingEngine>;

// Adds minhop, updown, ftree and dor to the RoutingRegistry (explicit: static registrars in a
// static library are dropped by the linker). Calling it again changes nothing.
void RegisterRoutingEngines();

// Shared by the engines: the switch-level graph, and the balanced choice among equal next hops.
struct SwitchGraph {
  explicit SwitchGraph(const topology::Topology& t);
  const topology::Topology& topo;
  // For each node: (local port, neighbour node, neighbour port) of every cabled port.
  struct Edge {
    int port, peer, peer_port;
  };
  std::vector<std::vector<Edge>> edges;
  bool IsSwitch(int n) const { return topo.nodes[n].type == topology::NodeType::kSwitch; }
};

// The up*/down* ranking: roots are the switches farthest from any CA (the spines of a fat tree),
// or that reach none; a switch's rank is its BFS distance from the roots. A hop goes "up" toward
// lower rank, ties broken toward the lower NodeGUID.
std::vector<int> UpDownRanks(const topology::Topology& t);
bool UpDownIsUp(const topology::Topology& t, const std::vector<int>& rank, int from, int to);

// The engines with a file of their own (fat_tree.cc, dor.cc).
std::unique_ptr<RoutingEngine> MakeFatTree();
std::unique_ptr<RoutingEngine> MakeDor();

}  // namespace ibemu::routing
