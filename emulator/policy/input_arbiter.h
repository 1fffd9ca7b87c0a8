// Crossbar arbitration at one output port: among the input ports that request it on the chosen
// VL, which one is served. Round robin over input ports is what reproduces the parking-lot split
// the thesis reports (F2 and F3 share one input at S2), so the unit is the input port, not the
// flow.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "emulator/policy/registry.h"

namespace ibemu::policy {

class InputArbiter {
 public:
  virtual ~InputArbiter() = default;
  // `eligible(i)` says whether input i (0..num_inputs-1) can be served now; returns the chosen
  // input or -1.
  virtual int Pick(int vl, int num_inputs, const std::function<bool(int)>& eligible) = 0;
};

using InputArbiterRegistry = Registry<InputArbiter, int /*num_inputs*/>;

}  // namespace ibemu::policy
