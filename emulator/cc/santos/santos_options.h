// The parameters of the `santos` mechanism (docs/cc/santos.md): switch marking and the sources'
// window and rate.
#pragma once
#include <cstdint>
#include <string>

#include "common/policy/params.h"
#include "emulator/engine/event.h"

namespace ibemu::cc::santos {

enum class Trigger : uint8_t {
  kNone,      // no switch marks (a window-only run)
  kNaive,     // a full input buffer marks every packet in it [S:L103]
  kProposed,  // a full input buffer marks, at every output one of its packets waits for, as many
              // packets as the switch holds for that output (cnt1/cnt2) [S:L105-L113]
  kOutput,    // the same, triggered by an output's queue (the whole switch's packets for it)
              // reaching a buffer's size: marking as an output-buffered switch would
};

struct Options {
  Trigger trigger = Trigger::kProposed;
  // The fill, as a fraction of an input VL buffer, at which a buffer counts as full; 0: when it
  // has no room for another packet of the size that arrived (the paper's full buffer).
  double fill = 0;
  int window = 1;             // packets outstanding per QP, 0 for no window
  std::string rate = "lipd";  // a RateFunctionNames() entry, or "none"
  bool discrete = true;       // IPD in whole packet times 0..255, or the exact rate
  double r_min = 1.0 / 256;
  double m = 2;
  // Without persistence a QP that has been idle (no packet sent or acknowledged) for flow_gap
  // starts its next flow at R_max [S:L306, S:L330].
  bool persistent = true;
  engine::SimTime flow_gap = 0;  // 0: T_rec, 1/R_min packet times

  static Options From(const policy::Params& p);
};

}  // namespace ibemu::cc::santos
