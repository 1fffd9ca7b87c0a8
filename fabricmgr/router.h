// Routing what was discovered with the shared engines (common/routing): the subnet becomes
// a topology::Topology (node i of the subnet is node i of the topology, cables between linked
// ports), the assigned LIDs a LidMap, and the engine named in the policy fills the LFTs.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "common/routing/routing_engine.h"
#include "fabricmgr/subnet.h"

namespace ibemu::fabricmgr {

// What the SM needs from a routing run.
struct Routes {
  std::string engine;  // the engine that produced them (the fallback if the first refused)
  std::string note;    // why the fallback was used, if it was
  uint16_t top_lid = 0;
  routing::RoutingResult result;  // keyed by subnet node index
};

topology::Topology ToTopology(const Subnet& s);
// lids: port GUID -> LID (switch port 0 GUIDs, CA port GUIDs).
routing::LidMap ToLidMap(const Subnet& s, const topology::Topology& t,
                         const std::map<uint64_t, uint16_t>& lids);
// Throws std::invalid_argument when no routing engine has that name.
void CheckEngine(const std::string& engine);
// Runs `engine`, or `fallback` when it throws std::invalid_argument (a topology it cannot
// route). Throws std::invalid_argument for an engine name nobody registered.
Routes ComputeRoutes(const Subnet& s, const std::map<uint64_t, uint16_t>& lids,
                     const std::string& engine, const std::string& fallback);

}  // namespace ibemu::fabricmgr
