// LID maps. Assign is the builtin subnet manager's: one LID per switch (its port 0) and one per
// connected CA port, in topology order from LID 1, so the same file always gives the same LIDs.
// FromLids takes the LIDs a real subnet manager (ibemu-fabricmgr) gave out, which may have holes.
#pragma once
#include <cstdint>
#include <vector>

#include "common/topology/topology.h"

namespace ibemu::routing {

constexpr size_t kMaxUnicastLid = 0xBFFF;

struct LidMap {
  std::vector<std::vector<uint16_t>> lid;  // [node][port]: LID (switches: port 0 only), 0 = none
  struct Owner {
    int node = -1;
    int port = 0;
  };
  std::vector<Owner> owner;             // [lid]
  std::vector<uint16_t> endpoint_lids;  // CA port LIDs in order: the destinations of traffic

  static LidMap Assign(const topology::Topology& t);
  // lid[node][port] as given (switches: port 0; CA ports; 0 = none). LIDs between the ones
  // given stay ownerless (node -1) and the engines route nothing to them. Throws
  // std::invalid_argument for a LID outside 1..kMaxUnicastLid, one given twice, a LID on a
  // switch data port, or a table that does not match the topology's nodes and ports.
  static LidMap FromLids(const topology::Topology& t, std::vector<std::vector<uint16_t>> lid);
  uint16_t max_lid() const { return static_cast<uint16_t>(owner.size() - 1); }
};

}  // namespace ibemu::routing
