// Fabric-wide facts every device needs and none owns: how LIDs map to endpoints, and the queuing
// policy all ports share (credit classes must agree at both ends of every link).
#pragma once
#include <cstdint>
#include <vector>

#include "emulator/policy/input_queuing.h"

namespace ibemu::fabric {

struct FabricContext {
  const policy::InputQueuing* queuing = nullptr;
  std::vector<int32_t> dest_index_of_lid;  // LID -> dense endpoint index, -1 if not an endpoint
  int num_destinations = 0;

  int DestIndex(uint16_t lid) const {
    return lid < dest_index_of_lid.size() ? dest_index_of_lid[lid] : -1;
  }
};

}  // namespace ibemu::fabric
