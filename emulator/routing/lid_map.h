// LID assignment, until the subnet manager (issue 3) does it over MADs: one LID per switch (its
// port 0) and one per connected CA port, in topology order from LID 1, so the same file always
// gives the same LIDs.
#pragma once
#include <cstdint>
#include <vector>

#include "emulator/topology/topology.h"

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
  uint16_t max_lid() const { return static_cast<uint16_t>(owner.size() - 1); }
};

}  // namespace ibemu::routing
