// One rank of a partitioned run whose processes an existing launcher started (`mpirun -np N
// ibemu rank <plan>`, `srun -n N ibemu rank <plan>`): rank k runs partition k of the plan, links
// between ranks go over ZeroMQ tcp://, and rank 0 also gathers the results, as `ibemu run
// --partitions N` does for the processes it starts itself.
#pragma once
#include <optional>
#include <string>

#include "emulator/fabric/plan.h"
#include "emulator/fabric/runner.h"

namespace ibemu::fabric {

// This process's place in the job, from the environment the launcher sets: Open MPI
// (OMPI_COMM_WORLD_*, PMIX_NAMESPACE), Slurm (SLURM_PROCID, SLURM_STEP_NUM_TASKS,
// SLURM_JOB_ID.SLURM_STEP_ID), PMIx (PMIX_RANK) or PMI (PMI_RANK, PMI_SIZE).
struct LaunchedRank {
  uint32_t rank = 0;
  int64_t size = -1;   // -1: the launcher did not say
  std::string job;     // the same for every rank of one launch, different for the next
  std::string source;  // which variable gave the rank, for messages
};
std::optional<LaunchedRank> RankFromEnvironment();

// Where rank 0 publishes its control endpoint for this job, in the plan directory.
std::string LauncherEndpointFile(const std::string& dir, const std::string& job);

struct RankOptions {
  std::string plan_dir;
  // The address this rank's sockets bind on; "*" binds every interface and tells the other
  // ranks this host's name.
  std::string bind = "*";
  double wait_seconds = 120;  // how long a rank waits for rank 0's endpoint
  std::string job;            // the launch's id, if the launcher's environment gives none
  bool progress = false;
};

// Refuses a launch whose ranks do not match the plan, naming the plan and the counts.
void CheckRank(const Plan& plan, const LaunchedRank& me, const std::string& plan_dir);

// Runs this rank's partition. Rank 0 returns the gathered results; the other ranks return
// nullopt when their partition has finished. Throws on any failure, naming it.
// `planned` is rank 0's scenario (LoadPlannedScenario(plan), loaded once by the caller, which
// reports with it); the other ranks pass null, their processes load it from the run
// configuration.
std::optional<RunResult> RunRank(const Plan& plan, const LaunchedRank& me, const RankOptions& o,
                                 const scenario::Scenario* planned);

}  // namespace ibemu::fabric
