// Crossbar arbitration at one output port: among the input ports that request it on the chosen
// VL, which one is served. Round robin over input ports is what reproduces the parking-lot split
// the thesis reports (F2 and F3 share one input at S2), so the unit is the input port, not the
// flow.
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "common/policy/registry.h"

namespace ibemu::policy {

// A non-owning, non-allocating reference to a callable `bool(int)`: arbitration runs for every
// packet, and std::function would allocate for a capturing lambda.
class EligibleFn {
 public:
  template <typename F>
  EligibleFn(F&& f)  // NOLINT: implicit on purpose, like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, int i) { return (*static_cast<std::remove_reference_t<F>*>(o))(i); }) {}
  bool operator()(int i) const { return call_(obj_, i); }

 private:
  void* obj_;
  bool (*call_)(void*, int);
};

class InputArbiter {
 public:
  virtual ~InputArbiter() = default;
  // `eligible(i)` says whether input i (0..num_inputs-1) can be served now; returns the chosen
  // input or -1.
  virtual int Pick(int vl, int num_inputs, EligibleFn eligible) = 0;
};

using InputArbiterRegistry = Registry<InputArbiter, int /*num_inputs*/>;

}  // namespace ibemu::policy
