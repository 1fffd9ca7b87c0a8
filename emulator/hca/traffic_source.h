// What an HCA is asked to send: each traffic source names a flow (for results), how messages
// arrive, and where they go. Patterns (uniform, hotspot, incast...) are expanded by the scenario
// into these per-HCA sources, so the HCA knows nothing about patterns.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "common/link/link_rate.h"
#include "emulator/hca/destination_list.h"
#include "emulator/hca/trace_program.h"

namespace ibemu::hca {

using link::SimTime;

enum class Arrival : uint8_t {
  kSaturate,  // always backlogged: the next message starts when the previous one is queued
  kPoisson,   // exponential inter-arrival times with mean message_bytes / rate
  kConstant,  // fixed inter-arrival times
};

struct OnOff {
  SimTime on = 0;  // 0: always on
  SimTime off = 0;
};

struct TrafficSource {
  uint32_t flow = 0;  // index into the run's flow table
  int port = 1;       // HCA port the traffic leaves from
  uint8_t sl = 0;
  Arrival arrival = Arrival::kSaturate;
  int64_t rate_bps = 0;  // payload rate for kPoisson/kConstant
  uint32_t message_bytes = 65536;
  // Unreliable Connected SENDs: no acknowledgements at all (the papers' models with no
  // end-to-end traffic in the reverse direction); RC otherwise.
  bool uc = false;
  SimTime start = 0;
  SimTime stop = INT64_MAX;
  OnOff onoff;
  // Destinations by LID with cumulative weights (for uniform/hotspot); one entry for fixed flows.
  // Schedules change the destination set at given times (moving congestion trees).
  struct Phase {
    SimTime from = 0;
    DestinationList dlids;
    std::vector<uint32_t> cum_weights;  // same length as dlids; empty = equal weights
  };
  std::vector<Phase> phases;
  SimTime cycle = 0;  // > 0: the phases repeat with this period (windy and moving trees)
  // A replayed application's rank (docs/traces.md): its operations replace arrivals and phases.
  std::shared_ptr<const TraceProgram> trace;
  uint32_t rank = 0;
};

}  // namespace ibemu::hca
