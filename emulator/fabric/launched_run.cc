#include "emulator/fabric/launched_run.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <thread>

#include "emulator/fabric/partitioned_runner.h"

namespace ibemu::fabric {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

int64_t Int(const char* v) {
  return static_cast<int64_t>(std::strtoll(v, nullptr, 10));
}

// Written to a temporary name and renamed, so a rank never reads half an endpoint.
void Publish(const std::string& file, const std::string& endpoint) {
  std::string tmp = file + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    out << endpoint << "\n";
    if (!out) throw std::runtime_error(tmp + ": cannot write rank 0's endpoint");
  }
  std::filesystem::rename(tmp, file);
}

std::string AwaitEndpoint(const std::string& file, double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    std::ifstream in(file);
    std::string ep;
    if (in && std::getline(in, ep) && !ep.empty()) return ep;
    if (std::chrono::steady_clock::now() > until)
      throw std::runtime_error("rank 0 did not publish its endpoint in " + file + " within " +
                               std::to_string(static_cast<int>(seconds)) +
                               " s (is the plan directory shared by every host?)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

std::optional<LaunchedRank> RankFromEnvironment() {
  LaunchedRank r;
  if (const char* v = Env("OMPI_COMM_WORLD_RANK")) {
    r.rank = static_cast<uint32_t>(Int(v));
    if (const char* s = Env("OMPI_COMM_WORLD_SIZE")) r.size = Int(s);
    const char* j = Env("PMIX_NAMESPACE");
    if (!j) j = Env("OMPI_MCA_ess_base_jobid");
    r.job = j ? j : "";
    r.source = "OMPI_COMM_WORLD_RANK";
  } else if (const char* v = Env("SLURM_PROCID")) {
    r.rank = static_cast<uint32_t>(Int(v));
    const char* s = Env("SLURM_STEP_NUM_TASKS");
    if (!s) s = Env("SLURM_NTASKS");
    if (s) r.size = Int(s);
    const char* j = Env("SLURM_JOB_ID");
    const char* st = Env("SLURM_STEP_ID");
    if (j) r.job = std::string(j) + "." + (st ? st : "");
    r.source = "SLURM_PROCID";
  } else if (const char* v = Env("PMIX_RANK")) {
    r.rank = static_cast<uint32_t>(Int(v));
    const char* j = Env("PMIX_NAMESPACE");
    r.job = j ? j : "";
    r.source = "PMIX_RANK";
  } else if (const char* v = Env("PMI_RANK")) {
    r.rank = static_cast<uint32_t>(Int(v));
    if (const char* s = Env("PMI_SIZE")) r.size = Int(s);
    r.source = "PMI_RANK";
  } else {
    return std::nullopt;
  }
  return r;
}

std::string LauncherEndpointFile(const std::string& dir, const std::string& job) {
  std::string safe;
  for (char ch : job) safe += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return dir + "/launcher-" + (safe.empty() ? "job" : safe) + ".endpoint";
}

void CheckRank(const Plan& plan, const LaunchedRank& me, const std::string& plan_dir) {
  const uint32_t n = plan.partitions();
  if (me.size >= 0 && me.size != n)
    throw std::invalid_argument(plan_dir + "/plan.yaml has " + std::to_string(n) +
                                " partitions; the launcher started " + std::to_string(me.size) +
                                " ranks (start it with -np " + std::to_string(n) + ")");
  if (me.rank >= n)
    throw std::invalid_argument("rank " + std::to_string(me.rank) + " (" + me.source +
                                "): " + plan_dir + "/plan.yaml has only " + std::to_string(n) +
                                " partitions");
}

std::optional<RunResult> RunRank(const Plan& plan, const LaunchedRank& me, const RankOptions& o,
                                 const scenario::Scenario* planned) {
  CheckRank(plan, me, o.plan_dir);
  const uint32_t n = plan.partitions();
  const std::string job = o.job.empty() ? me.job : o.job;
  // The endpoint file is per launch: without a job id a rank could read one an earlier, killed
  // launch left and wait forever for a rank 0 that is gone.
  if (job.empty())
    throw std::invalid_argument(
        "the launcher set no job id (PMIX_NAMESPACE, OMPI_MCA_ess_base_jobid, SLURM_JOB_ID) to "
        "tell this launch from others: give every rank the same --job <id>");
  const std::string file = LauncherEndpointFile(o.plan_dir, job);
  if (me.rank != 0) {
    int st = RunWorker(AwaitEndpoint(file, o.wait_seconds), me.rank, "", o.bind, false);
    if (st != 0)
      throw std::runtime_error("the process of partition " + std::to_string(me.rank) +
                               " failed (status " + std::to_string(st) + ")");
    return std::nullopt;
  }

  // Rank 0: the gathering launcher in a thread, and partition 0 in this one.
  if (!planned) throw std::logic_error("rank 0 runs with its planned scenario");
  const scenario::Scenario& s = *planned;
  std::filesystem::remove(file);  // a file left by an earlier launch with the same job id
  PartitionOptions po;
  po.per_device = plan.mode == "per-device";
  po.partitions = static_cast<int>(n);
  po.plan = plan.lp_partition;
  po.transport = "tcp";
  po.bind_host = o.bind;
  po.spawn = false;
  po.progress = o.progress;
  std::promise<std::string> listening;
  std::future<std::string> endpoint = listening.get_future();
  po.on_listening = [&](const std::string& ep) { listening.set_value(ep); };
  std::optional<RunResult> result;
  std::exception_ptr failed;
  std::atomic<bool> published{false};
  std::thread gather([&] {
    try {
      result = RunPartitioned(s, po);
    } catch (const std::exception& e) {
      // Once the other ranks have the endpoint, partition 0's worker in the main thread may be
      // waiting for messages that will not come; the launcher (mpirun, srun) ends the job when
      // a rank exits with an error.
      if (published) {
        std::fprintf(stderr, "ibemu: error: %s\n", e.what());
        std::fflush(stderr);
        std::_Exit(2);
      }
      failed = std::current_exception();
      try {
        listening.set_value("");
      } catch (const std::future_error&) {  // it was set before the failure
      }
    }
  });
  struct Join {
    std::thread& t;
    ~Join() {
      if (t.joinable()) t.join();
    }
  } join{gather};
  std::string ep = endpoint.get();
  int st = 0;
  if (!ep.empty()) {
    try {
      Publish(file, ep);
    } catch (const std::exception& e) {
      // The launcher thread waits for every rank's hello; none will come.
      std::fprintf(stderr, "ibemu: error: %s\n", e.what());
      std::fflush(stderr);
      std::_Exit(2);
    }
    published = true;
    st = RunWorker(ep, 0, "", o.bind, false);
  }
  gather.join();
  std::filesystem::remove(file);
  if (failed) std::rethrow_exception(failed);
  if (st != 0) throw std::runtime_error("the process of partition 0 failed");
  return result;
}

}  // namespace ibemu::fabric
