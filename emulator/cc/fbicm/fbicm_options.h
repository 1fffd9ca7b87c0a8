// The parameters of the `fbicm` and `ccfit` mechanisms (docs/cc/fbicm.md): the congested-flow
// queues and their thresholds, and CCFIT's marking.
#pragma once
#include <cstdint>

#include "common/policy/params.h"

namespace ibemu::cc::fbicm {

struct Options {
  int cfqs = 2;        // congested-flow queues (and input CAM lines) per input port and VL
  int out_lines = 16;  // CAM lines per output port and VL (what downstream switches isolate)
  // In 64-byte blocks. Detection: the normal queue (NFQ) holds more than this; a CFQ is then
  // allocated for the destination of the NFQ's head (L5771-L5787).
  uint32_t detect_blocks = 8 * 33;
  // CFQ Stop/Go toward the upstream device (L6029-L6030: 10 and 4 MTUs). The first Stop also
  // tells the upstream device to isolate the flow (allocation).
  uint32_t stop_blocks = 10 * 33;
  uint32_t go_blocks = 4 * 33;
  // CCFIT: a root CFQ above high puts its output port in the congestion state until it falls
  // below low (L5832-L5845); packets leaving a congested output are marked (FECN) with
  // probability marking_rate if at least packet_size blocks long.
  bool throttle = false;
  uint32_t high_blocks = 4 * 33;
  uint32_t low_blocks = 2 * 33;
  double marking_rate = 0.85;
  uint32_t packet_size_blocks = 0;
  // EcoCC (Paper VI): a normal queue that is a VOQ above high is for certain at a root
  // (L6558-L6568). No CFQ is allocated there: the output enters the congestion state (marked if
  // `throttle`) until the VOQ falls below low, and the upstream device is told to isolate the
  // flow. A CFQ (an HPQ) tells its upstream device at its first crossing of high, sends Stop at
  // later crossings and Go at low (L6638-L6648).
  bool voq_roots = false;
  // EcoCC: mark only at an output that has not waited for credits (IB's root test, L6621).
  bool root_credit_test = false;

  enum class Kind { kFbicm, kCcfit, kEcocc, kHfdi };
  static Options From(const policy::Params& p, Kind kind);
};

// Control messages between neighbours (SwitchView::SendControl): a = kind | VL << 8, b = DLID.
enum Control : uint32_t {
  kStop = 1,      // isolate the flow to DLID (allocating a line if none) and stop sending it
  kGo = 2,        // send it again
  kRelease = 3,   // the downstream CFQ was deallocated: release the line
  kAllocate = 4,  // isolate the flow to DLID (EcoCC's allocation, without a Stop)
};

}  // namespace ibemu::cc::fbicm
