// The choices IB CC leaves to the implementer, or where the papers and the spec differ: each is a
// parameter of the `ib` mechanism (docs/cc/ib.md), with the spec's reading as the default.
#pragma once
#include <cstdint>

#include "common/policy/params.h"
#include "emulator/engine/packet.h"

namespace ibemu::cc::ib {

enum class Evaluation : uint8_t {
  kSum,          // the blocks queued for the Port VL at all inputs, against the level
  kVoq,          // each input's queue for the Port VL on its own (one above is enough)
  kSumPerInput,  // the sum divided by the inputs that contribute to it
};

enum class Marking : uint8_t {
  kRandom,   // each eligible packet with probability 1 / (Marking_Rate + 1) (Paper II)
  kCounter,  // every (Marking_Rate + 1)-th eligible packet
};

struct Options {
  Evaluation evaluation = Evaluation::kSum;
  Marking marking = Marking::kRandom;
  // Leaving the congested state takes the occupancy this many blocks below the level it entered
  // at (Paper II's lower threshold); 0 is the spec's single threshold.
  uint32_t hysteresis_blocks = 0;
  // A CCT entry's delay is (base >> shift) * multiplier. Base 0: the time the port takes to send
  // an MTU packet (as hfi1 does), so the table is relative to the link; otherwise a fixed time,
  // which is how the papers give their tables (in microseconds).
  engine::SimTime cct_base = 0;
  // On a BECN, restart the CCTI_Timer (Paper I's simulator, CCFIT) instead of leaving a running
  // timer alone (the spec, hfi1).
  bool timer_restart_on_becn = false;
  // The destination answers FECN with BECN on the acknowledgement when the packet asks for one,
  // and with a CNP otherwise; false sends a CNP for every marked packet (Paper I's simulator).
  bool becn_on_ack = true;
  uint64_t seed = 1;

  static Options From(const policy::Params& p);
};

}  // namespace ibemu::cc::ib
