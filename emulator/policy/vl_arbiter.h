// Output VL arbitration: which VL transmits next on a port.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/policy/registry.h"
#include "emulator/link/port.h"

namespace ibemu::policy {

using link::kMaxVls;
using link::kVl15;

// One VLArbitrationTable entry: a VL and its weight in 64-byte units (IBA 7.6.9).
struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;
};

struct VlArbConfig {
  std::vector<VlArbEntry> high;  // up to 64 entries
  std::vector<VlArbEntry> low;
  // Limit of High Priority: how many 4096-byte units of high-priority packets may be sent while a
  // low-priority packet waits; 255 means unlimited (IBA 7.6.9.2).
  uint8_t limit_of_high_priority = 0;
  int data_vls = 1;
};

class VlArbiter {
 public:
  virtual ~VlArbiter() = default;
  // Picks one VL from `eligible` (bit v set: VL v has a packet that may be sent now), or -1.
  // VL15 is not arbitrated: it goes before any data VL (IBA 7.6.9).
  virtual int Pick(uint32_t eligible) = 0;
  // Told after every packet so weights are charged in the units the spec uses.
  virtual void Sent(int vl, uint32_t bytes) = 0;

  // What devices call: Pick and Sent, skipped for an arbiter that can only ever pick one VL (a
  // fabric with one data VL). Its Pick then answers that VL whenever it is eligible, whatever
  // state the calls would have left, and reading that state was two cache misses a packet-hop.
  int Choose(uint32_t eligible) { return Choose(*this, only_vl_, eligible); }
  void Charge(int vl, uint32_t bytes) { Charge(*this, only_vl_, vl, bytes); }
  // That one VL (-1: Pick may return several), for a device that keeps it beside the state it
  // reads anyway and calls the two below with it: with one VL they touch no line of the arbiter.
  int only_vl() const { return only_vl_; }
  static int Choose(VlArbiter& a, int only_vl, uint32_t eligible) {
    if (only_vl < 0) return a.Pick(eligible);
    return eligible >> only_vl & 1 ? only_vl : -1;
  }
  static void Charge(VlArbiter& a, int only_vl, int vl, uint32_t bytes) {
    if (only_vl < 0) a.Sent(vl, bytes);
  }

 protected:
  // For an implementation whose Pick can return no VL but `vl` (-1: it can return several).
  void set_only_vl(int vl) { only_vl_ = vl; }

 private:
  int only_vl_ = -1;
};

using VlArbiterRegistry = Registry<VlArbiter, const VlArbConfig&>;

}  // namespace ibemu::policy
