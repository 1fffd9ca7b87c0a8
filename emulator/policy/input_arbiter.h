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
#include "emulator/policy/port_mask.h"

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
  // input or -1. `requesting` (bit i of word i / 64), when not null, holds the inputs with a
  // request: no other is eligible, so an arbiter need not ask about them.
  virtual int Pick(int vl, int num_inputs, const uint64_t* requesting, EligibleFn eligible) = 0;
};

// Calls f(i) for the inputs set in `requesting` (all of 0..n-1 when null) in the order
// from+1, ..., n-1, 0, ..., from, until f returns true; returns that input or -1. Outputs with
// three dozen inputs and a few requests are the common case, so the set bits are visited, not
// every input.
template <typename F>
int ScanFrom(int from, int n, const uint64_t* requesting, F&& f) {
  if (!requesting) {
    for (int k = 1; k <= n; ++k) {
      int i = (from + k) % n;
      if (f(i)) return i;
    }
    return -1;
  }
  size_t words = static_cast<size_t>(n + 63) / 64;
  int start = from + 1 >= n ? 0 : from + 1;
  // The inputs from `start` up, then those below it.
  for (int i = NextPort(requesting, words, start); i < n; i = NextPort(requesting, words, i + 1))
    if (f(i)) return i;
  for (int i = NextPort(requesting, words, 0); i < start; i = NextPort(requesting, words, i + 1))
    if (f(i)) return i;
  return -1;
}

using InputArbiterRegistry = Registry<InputArbiter, int /*num_inputs*/>;

}  // namespace ibemu::policy
