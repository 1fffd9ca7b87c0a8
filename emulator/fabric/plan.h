// A partition plan: which process runs which device, for runs whose processes an existing
// launcher starts (`mpirun -np N ibemu rank <dir>`, `srun -n N ibemu rank <dir>`), one per rank.
// `ibemu plan` writes it; each rank reads it, and rank 0 also gathers the results.
//
// The plan directory is the rendezvous: rank 0 binds its control socket on tcp:// and writes its
// endpoint into the directory under the launcher's job id, and the other ranks read it there. So
// ranks on several hosts need the directory on a shared file system, as they need the scenario
// and the ibemu binary.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/scenario/scenario.h"

namespace ibemu::fabric {

struct Plan {
  std::string scenario;  // absolute path of the scenario file
  uint64_t seed = 1;
  link::SimTime duration = 0, measure_from = 0, measure_to = 0;
  std::string mode = "partitioned";    // or "per-device"
  std::vector<uint32_t> lp_partition;  // [LP] -> partition (= rank)
  uint32_t partitions() const;
};

// The plan for `s` as loaded (with the run's seed and duration already applied): refuses what a
// partitioned run refuses, before anything starts.
Plan MakePlan(const scenario::Scenario& s, int partitions, bool per_device);
void WritePlan(const Plan& p, const scenario::Scenario& s, const std::string& dir);
// Errors name the file, line and field.
Plan ReadPlan(const std::string& dir);
// The scenario of a plan, with the plan's seed, duration and measurement window.
scenario::Scenario LoadPlannedScenario(const Plan& p);

}  // namespace ibemu::fabric
