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

  // Credit classes (policy::InputQueuing), filled when the fabric is built: the class of each
  // endpoint (empty: every packet in class 0); or, for a queuing policy that looks ahead, each
  // receiving switch's output port per LID (its LFT as the builtin SM programs it), since there
  // the class is the queue the packet takes at the receiver.
  int credit_classes = 1;                         // per VL, on every port
  std::vector<uint16_t> class_of_dest;            // [endpoint index]
  std::vector<std::vector<uint8_t>> next_output;  // [receiver LP][LID]; empty at a CA
  // The credit class on a link to the device `peer_lp` of a packet for `dlid`.
  int CreditClassTo(uint32_t peer_lp, uint16_t dlid) const {
    if (!next_output.empty()) {
      const std::vector<uint8_t>& lft = next_output[peer_lp];
      return dlid < lft.size() && lft[dlid] != 0xFF ? lft[dlid] : 0;
    }
    int d = DestIndex(dlid);
    return d < 0 || class_of_dest.empty() ? 0 : class_of_dest[d];
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
