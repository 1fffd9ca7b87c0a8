// Fabric-wide facts every device needs and none owns: how LIDs map to endpoints, and the queuing
// policy all ports share (credit classes must agree at both ends of every link).
#pragma once
#include <cstdint>
#include <vector>

namespace ibemu::policy {
class InputQueuing;  // the devices that read it include emulator/policy/input_queuing.h
}

namespace ibemu::link {

struct FabricContext {
  const policy::InputQueuing* queuing = nullptr;
  std::vector<int32_t> dest_index_of_lid;  // LID -> dense endpoint index, -1 if not an endpoint
  int num_destinations = 0;
  std::vector<uint8_t> switch_lp;  // [LP]: the node is a switch
  // H7: the side band's LP and the time its messages take; -1 when the mechanism has none.
  int64_t side_band_lp = -1;
  int64_t side_band_latency = 0;  // ps

  int DestIndex(uint16_t lid) const {
    return lid < dest_index_of_lid.size() ? dest_index_of_lid[lid] : -1;
  }

  // With an external subnet manager the LIDs an SM assigns are not the ones traffic was written
  // with: traffic names its destination by the load-time LID (an endpoint index), and each packet
  // goes to the LID the destination port has now. Empty with the builtin SM (the two agree).
  std::vector<const uint16_t*> live_lid;  // [endpoint index] -> that port's PortInfo:LID
  // The LID to put in a packet for a destination named by its load-time LID; 0 while the port
  // has none (the packet must wait).
  uint16_t WireLid(uint16_t load_lid) const {
    if (live_lid.empty()) return load_lid;
    int i = DestIndex(load_lid);
    return i < 0 ? 0 : *live_lid[i];
  }
};

}  // namespace ibemu::link
