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
  // VL15 is not arbitrated: it goes before any data VL (IBA 7.6.9). Until the management plane
  // (issue 3) sends SMPs, devices drop VL15 packets and never offer VL15 here.
  virtual int Pick(uint32_t eligible) = 0;
  // Told after every packet so weights are charged in the units the spec uses.
  virtual void Sent(int vl, uint32_t bytes) = 0;
};

using VlArbiterRegistry = Registry<VlArbiter, const VlArbConfig&>;

}  // namespace ibemu::policy
