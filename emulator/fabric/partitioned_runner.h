// Runs a scenario spread over several OS processes ("partitions"), each holding some devices, with
// links between partitions carried over ZeroMQ (ipc:// on one host, tcp:// across hosts).
//
// Synchronisation is conservative and has no central barrier: each process tells each neighbour,
// with every batch of events it sends, a promise (no later event from me will be earlier than
// this), equal to its own next event time or safe time plus the smallest latency of the links
// between them. A process handles only events earlier than every neighbour's promise, so it
// handles exactly the events, in exactly the order, that the single-process run handles.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "emulator/fabric/runner.h"

namespace ibemu::fabric {

struct PartitionOptions {
  int partitions = 1;
  bool per_device = false;        // one process per switch and per HCA
  std::string transport = "ipc";  // "ipc" (one host) or "tcp"
  std::string bind_host = "127.0.0.1";
  std::string exe;  // the ibemu binary for the processes; default: this one
  bool progress = false;
  // false: start no processes; print the `ibemu worker` command of each partition (to be run on
  // any host that reaches the launcher over tcp) and wait for them to connect.
  bool spawn = true;
  // When not empty, the partition of every LP (a plan from `ibemu plan`), used as given.
  std::vector<uint32_t> plan;
  // Called with the launcher's control endpoint once it is bound (for processes a launcher such
  // as mpirun started, which find it in a file); instead of printing `ibemu worker` commands.
  std::function<void(const std::string&)> on_listening;
};

// Partition of every LP: a switch and the CAs cabled to it stay together when there are at least
// as many switches as partitions; otherwise LPs are split into contiguous blocks.
std::vector<uint32_t> AssignPartitions(const topology::Topology& t, int partitions,
                                       bool per_device);

// The partition of every LP, the side band's included (it runs in partition 0), after the checks
// a partitioned run makes: each is refused with a message before anything starts.
std::vector<uint32_t> PlanPartitions(const scenario::Scenario& s, int partitions, bool per_device);

RunResult RunPartitioned(const scenario::Scenario& s, const PartitionOptions& o);

// The body of `ibemu worker`: one emulator process. Returns the process exit status. A bind_host
// of "*" binds every interface and names this host (gethostname) to the other processes.
int RunWorker(const std::string& launcher, uint32_t partition, const std::string& ipc_dir,
              const std::string& bind_host, bool watch_parent);

}  // namespace ibemu::fabric
