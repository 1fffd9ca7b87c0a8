// The parameters of the `dbbm` and `ddbbm` mechanisms (docs/cc/dbbm.md): the queues, where the
// queue is chosen (the paper's switches or the IB-native SL at the source), and DDBBM's
// destination detector.
#pragma once
#include <cstdint>
#include <string>

#include "common/policy/params.h"
#include "emulator/engine/event.h"

namespace ibemu::cc::dbbm {

// DDBBM's congestion bit in the paper's form: a bit of the BTH's Resv6a beside MVCM's VB (0x20),
// set at the source for a whole message and never changed on the way.
constexpr uint8_t kCbInResv6a = 0x10;

enum class Form : uint8_t {
  kIb,     // the source picks an SL per queue; SL2VL tables map SL i to VL i (no switch change)
  kPaper,  // every switch picks the VL from the destination and the header's congestion bit
};

struct Options {
  int queues = 4;        // x: DBBM queues; DDBBM adds the dynamic queue x
  bool dynamic = false;  // DDBBM
  Form form = Form::kIb;
  // The destination detector [D:L69-L85]: a frame of tf; congestion when the bytes received in
  // it exceed dt of the most the link can deliver in a frame and enough sources are heavy; over
  // when they fall below lt.
  engine::SimTime tf = 50 * 1000 * 1000;  // 50 us
  double dt = 0.95;
  double lt = 0.2;
  // A source is heavy when its bytes exceed sit/N of the frame's (N: the end nodes); 0: no
  // source test. `sit_of`: of the bytes received in the frame (the paper's "(600/N)% of the
  // total received traffic"), or of the most the link can deliver ("the injection rate of
  // 100/N").
  double sit = 6;
  bool sit_of_max = false;
  // Heavy sources needed: more than ns (the paper's "higher than the NS register"), or at least.
  int ns = 1;
  bool ns_at_least = true;

  int NumVls() const { return queues + (dynamic ? 1 : 0); }
  static Options From(const policy::Params& p, bool dynamic);
};

}  // namespace ibemu::cc::dbbm
