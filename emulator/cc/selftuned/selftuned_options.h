// The parameters of the `selftuned` mechanism (docs/cc/selftuned.md): Thottethodi, Lebeck and
// Mukherjee's global throttling, its static-threshold form and the ALO baseline.
#pragma once
#include <cstdint>

#include "common/policy/params.h"
#include "emulator/engine/event.h"

namespace ibemu::cc::selftuned {

enum class Policy : uint8_t {
  kTune,    // global estimate against a threshold tuned by hill climbing [S:L147-L185]
  kStatic,  // the same estimate against a fixed threshold [S:L252-L254]
  kAlo,     // At-Least-One: a local test at the source's switch, no side band [S:L217-L225]
};

struct Options {
  Policy policy = Policy::kTune;
  // The gather period g: the network's count of full buffers is sampled every g and known
  // everywhere g later [S:L131-L133].
  engine::SimTime g = 0;
  bool extrapolate = true;  // linear from the last two snapshots [S:L137]; false: hold the last
  // Hill climbing, as fractions of all buffers counted: the first threshold, the steps up and
  // down [S:L165, S:L175]; a tuning period of `tune_periods` gathers [S:L169].
  double initial = 0.01, increment = 0.01, decrement = 0.04;
  int tune_periods = 3;
  double drop = 0.75;         // a period below this fraction of the last one is a drop [S:L167]
  bool local_maxima = true;   // avoid them [S:L181-L185]
  double significant = 0.75;  // "significantly below the maximum": below this fraction of it
  int stale = 5;              // corrective actions in a row after which the maximum is stale
  uint32_t threshold = 0;     // kStatic: full buffers
  engine::SimTime alo_period = 0;  // kAlo: how often a switch looks at its outputs

  static Options From(const policy::Params& p);
};

// Side-band message kinds (the `a` of a report or broadcast).
enum Signal : uint32_t {
  kSample = 1,     // broadcast: take a sample now; b = the sample's index
  kFullCount = 2,  // a switch's report: b = full buffers | all buffers counted << 32
  kDelivered = 3,  // an HCA's report: b = payload bytes delivered to it since its last one
  kEstimate = 4,   // broadcast: b = snapshot (full buffers) | threshold << 32
  kAloState = 5,   // control, switch to host: b = 1 if the host's packets wait for a full output
};

}  // namespace ibemu::cc::selftuned
