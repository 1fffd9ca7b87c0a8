// The parameters of the `mvcm` mechanism (docs/cc/mvcm.md): the switches' MVPM thresholds and
// the sources' dynamic window and waiting slots, with the ablations of Ferrer et al. as
// switches of their own.
#pragma once
#include <cstdint>

#include "common/policy/params.h"
#include "emulator/engine/event.h"

namespace ibemu::cc::mvcm {

// The validation bit travels in the top bit of the BTH's Resv6a, beside FECN (the marking bit)
// and BECN: the paper takes "any of the header bits usually reserved by the specs for vendor
// applications" [M:L160]; byte 4 is masked out of the ICRC, so a switch may set it.
constexpr uint8_t kVbInResv6a = 0x20;

enum class WsCap : uint8_t {
  kKPowNMinus1,  // number_WS stops at k^(n-1): n increases, the first (0 -> 1) included
  kKPowN,        // at k^n: the first increase not counted
  kNone,         // grows without bound (the paper's Fig. 16b ablation)
};

struct Options {
  // MVPM: MB when the input buffer holds more than th_in of its capacity (counting the packet
  // that arrives), VB on a marked packet when its output buffer holds more than th_out
  // (counting the packet that leaves) [M:L162, M:L216].
  double th_in = 0.66;
  double th_out = 0.33;
  // Sources: the dynamic window DW in [1, dw_max] [M:L198]; static: DW stays at dw_max.
  int dw_max = 2;
  bool dynamic_window = true;
  // Waiting slots [M:L200-L202, M:L281-L301]: number_WS 0, 1, k, k^2, ... up to the cap, each
  // slot rtt_min long (0: the smallest round trip the QP has measured).
  bool waiting_slots = true;
  int k = 4;
  int n = 3;
  WsCap cap = WsCap::kKPowNMinus1;
  engine::SimTime rtt_min = 0;
  // Ablations: warm ACKs (MB only) taken as cold, i.e. no moderate actions (Fig. 14b); MB alone
  // taken as hot, the source driven by input marking only (Fig. 13).
  bool warm = true;
  bool pure_ipm = false;
  // DW and WS back to their initial values when a message comes to a QP with nothing queued and
  // nothing outstanding [M:L210].
  bool reset_on_idle = true;
  // The channel adapters: MVCM's source, or IB CC's (Pfister's) CCT throttling with BECN echoed
  // for validated packets only (MB and VB), the paper's Fig. 12.
  bool ib_source = false;

  // The largest number_WS the cap allows (0: none).
  uint64_t MaxWs() const;
  static Options From(const policy::Params& p);
};

}  // namespace ibemu::cc::mvcm
