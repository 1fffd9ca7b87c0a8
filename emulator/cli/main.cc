// ibemu: the launcher. `ibemu run scenario.yaml` builds the fabric, runs it in virtual time and
// writes results; the other subcommands check inputs and list what can be chosen.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "common/routing/routing_engine.h"
#include "common/topology/ibnetdiscover_parser.h"
#include "emulator/cc/mechanism.h"
#include "emulator/cli/host_libs.h"
#include "emulator/cli/huge_pages.h"
#include "emulator/cli/mpirun.h"
#include "emulator/fabric/fabric_service.h"
#include "emulator/fabric/launched_run.h"
#include "emulator/fabric/partitioned_runner.h"
#include "emulator/fabric/plan.h"
#include "emulator/fabric/runner.h"
#include "emulator/policy/builtin.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/input_queuing.h"
#include "emulator/policy/vl_arbiter.h"
#include "emulator/results/report.h"
#include "emulator/scenario/scenario.h"

namespace {

using namespace ibemu;

template <typename Reg>
void ListPolicies(const char* kind, const Reg& reg) {
  std::cout << kind << ":\n";
  for (const auto* e : reg.List())
    std::cout << "  " << std::left << std::setw(20) << e->name << " " << e->description << "\n";
}

// The scenario of `ibemu run` and `ibemu plan`, with the command line's overrides.
scenario::Scenario LoadForRun(const std::string& file, uint64_t seed, bool seed_set,
                              const std::string& duration, const std::string& pcap, bool no_plot) {
  scenario::Scenario s = scenario::LoadScenario(file);
  if (seed_set) s.seed = seed;
  if (!duration.empty()) {
    link::SimTime d;
    if (!scenario::ParseDuration(duration, &d) || d <= 0)
      throw scenario::ScenarioError("--duration: '" + duration + "' is not a duration");
    s.duration = d;
    if (s.measure_to > d) s.measure_to = d;
    if (s.measure_from >= s.measure_to) s.measure_from = 0;
  }
  if (!pcap.empty()) s.pcap = pcap;
  if (no_plot) s.plot = false;
  return s;
}

void Banner(const scenario::Scenario& s) {
  std::cerr << "ibemu: " << s.name << ": " << s.topo.nodes.size() << " nodes, "
            << s.topo.cables.size() << " cables from " << s.topology_source << "; routing "
            << s.routing << ", " << s.queuing << ", " << s.data_vls << " data VL(s), seed "
            << s.seed << "\n";
}

void RefuseTraceEnd(const scenario::Scenario& s) {
  if (s.end_with_traces)
    throw scenario::ScenarioError(s.file +
                                  ": run.end: traces ends a one-process run only; give the "
                                  "partitioned run its duration (run.end: duration)");
}

// The result table on stdout and the result files in `out_override`, the scenario's out_dir or
// results/<name>.
int Report(scenario::Scenario s, const fabric::RunResult& r, const std::string& out_override) {
  std::string dir = !out_override.empty() ? out_override
                    : !s.out_dir.empty()  ? s.out_dir
                                          : "results/" + s.name;
  if (r.simulated > 0 && r.simulated < s.duration) {  // the traces ended it (run.end)
    s.duration = r.simulated;
    s.measure_to = std::min(s.measure_to, s.duration);
    if (s.measure_from >= s.measure_to) s.measure_from = 0;
  }
  results::PrintTable(s, r, std::cout);
  auto files = results::WriteOutputs(s, r, dir, std::cerr);
  if (!s.pcap.empty()) std::cout << "capture " << s.pcap << " (" << r.pcap_packets << " packets)\n";
  std::cout << "results in " << dir << "/ (";
  for (size_t i = 0; i < files.size(); ++i)
    std::cout << (i ? ", " : "") << std::filesystem::path(files[i]).filename().string();
  std::cout << ")\n";
  return 0;
}

int Run(const std::string& file, const std::string& out_override, uint64_t seed, bool seed_set,
        const std::string& duration, const std::string& pcap, bool quiet, bool no_plot,
        fabric::PartitionOptions po, bool partitioned) {
  scenario::Scenario s = LoadForRun(file, seed, seed_set, duration, pcap, no_plot);
  if (!quiet) Banner(s);
  if (partitioned) RefuseTraceEnd(s);
  fabric::RunResult r;
  if (partitioned) {
    po.progress = !quiet;
    r = fabric::RunPartitioned(s, po);
  } else {
    fabric::RunOptions o;
    o.progress = !quiet;
    r = fabric::RunEmbedded(s, o);
  }
  return Report(std::move(s), r, out_override);
}

// `ibemu rank`: one process of a run an existing launcher started; rank 0 reports.
int RunAsRank(const fabric::RankOptions& o, const std::string& out_override, bool quiet,
              bool no_plot) {
  std::optional<fabric::LaunchedRank> me = fabric::RankFromEnvironment();
  if (!me)
    throw std::invalid_argument(
        "ibemu rank is started by a launcher (mpirun -np N, srun -n N): none of "
        "OMPI_COMM_WORLD_RANK, SLURM_PROCID, PMIX_RANK or PMI_RANK is set");
  fabric::Plan plan = fabric::ReadPlan(o.plan_dir);
  fabric::CheckRank(plan, *me, o.plan_dir);
  if (me->rank != 0) {
    fabric::RunRank(plan, *me, o, nullptr);
    return 0;
  }
  scenario::Scenario s = fabric::LoadPlannedScenario(plan);
  if (!quiet) Banner(s);
  std::optional<fabric::RunResult> r = fabric::RunRank(plan, *me, o, &s);
  if (no_plot) s.plot = false;
  return Report(std::move(s), *r, out_override);
}

// "node:port" as the CLI takes it.
std::pair<std::string, int> ParsePortRef(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() ||
      s.find_first_not_of("0123456789", colon + 1) != std::string::npos)
    throw std::invalid_argument("'" + s + "': expected <node>:<port number>, e.g. H1:1");
  return {s.substr(0, colon), std::stoi(s.substr(colon + 1))};
}

// `ibemu exec`: the program finds our libibumad.so.3 and libibverbs.so.1 before the system's,
// and the libraries find the HCA (and port) and the fabric in the environment
// (docs/management.md, hostlib/verbs/README.md). `--hca <node>` alone gives umad the node's best
// port, as libibumad picks port 0.
int ExecOnHca(const std::string& port, const std::string& hca, const std::string& fabric_name,
              const std::vector<std::string>& cmd) {
  std::string node = hca;
  if (!port.empty()) {
    node = ParsePortRef(port).first;  // refuses a malformed one before anything runs
  }
  if (node.empty()) throw std::invalid_argument("give --hca <node> or --port <node>:<port>");
  setenv("LD_LIBRARY_PATH", cli::HostLibraryPath().c_str(), 1);
  setenv("IBEMU_UMAD_PORT", port.empty() ? node.c_str() : port.c_str(), 1);
  setenv("IBEMU_VERBS_HCA", node.c_str(), 1);
  setenv("IBEMU_FABRIC", fabric_name.c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::cerr << "ibemu: error: cannot run " << cmd[0] << ": " << std::strerror(errno) << "\n";
  return 127;
}

}  // namespace

int main(int argc, char** argv) {
  cli::ReexecWithHugePages(argv);
  policy::RegisterBuiltins();
  CLI::App app{
      "ibemu: an InfiniBand fabric emulator. Switches and HCAs exchange real IB packets (LRH/BTH)\n"
      "with virtual lanes, SL2VL, VL arbitration and credit flow control in deterministic\n"
      "virtual time."};
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  ibemu run configs/scenarios/testbed-scenario1.yaml\n"
      "  ibemu run configs/scenarios/testbed-scenario1.yaml --partitions 3\n"
      "  ibemu run configs/scenarios/testbed-scenario1.yaml --per-device\n"
      "  ibemu plan configs/scenarios/testbed-scenario1.yaml --partitions 4 -o plan\n"
      "    then: mpirun -np 4 ibemu rank plan\n"
      "  ibemu up configs/topologies/testbed.topo &    then: ibemu status; ibemu down\n"
      "  ibemu validate configs/scenarios/fig2_4.yaml\n"
      "  ibemu policies\n"
      "Docs: docs/architecture.md (model and time), docs/scenarios.md (file format).");

  std::string file, out, duration, pcap;
  uint64_t seed = 1;
  bool quiet = false, no_plot = false;
  CLI::App* run =
      app.add_subcommand("run", "run a scenario and write results (table, CSV, JSON, plot)");
  run->add_option("scenario", file, "scenario YAML file")->required()->check(CLI::ExistingFile);
  run->add_option("-o,--out", out, "results directory (default: results/<scenario name>)");
  CLI::Option* seed_opt = run->add_option("--seed", seed, "override the scenario's seed");
  run->add_option("--duration", duration, "override run.duration (e.g. 2ms, 1s)");
  run->add_option("--pcap", pcap, "write a capture (pcap, ERF/InfiniBand records) to this file");
  run->add_flag("-q,--quiet", quiet, "no progress or banner on stderr");
  run->add_flag("--no-plot", no_plot, "skip the PNG plot");
  fabric::PartitionOptions po;
  CLI::Option* parts = run->add_option(
      "--partitions", po.partitions,
      "spread the fabric over N emulator processes linked by ZeroMQ (default: 1, embedded)");
  parts->check(CLI::Range(1, 4096));
  CLI::Option* per_dev =
      run->add_flag("--per-device", po.per_device, "one emulator process per switch and per HCA");
  run->add_option("--transport", po.transport, "links between processes: ipc (default) or tcp")
      ->check(CLI::IsMember({"ipc", "tcp"}));
  run->add_option("--bind", po.bind_host, "address to bind tcp endpoints on (default 127.0.0.1)");
  std::string spawn = "local";
  run->add_option(
         "--spawn", spawn,
         "local (default): start the emulator processes here; none: print their "
         "`ibemu worker` commands and wait (processes on other hosts; use --transport tcp)")
      ->check(CLI::IsMember({"local", "none"}));
  parts->excludes(per_dev);

  // `ibemu plan` and `ibemu rank`: the processes of a partitioned run started by an existing
  // launcher (mpirun, srun), one per rank, linked over tcp.
  std::string plan_file, plan_dir;
  int plan_parts = 0;
  bool plan_each = false;
  CLI::App* plan = app.add_subcommand(
      "plan", "write a partition plan for processes an existing launcher starts (mpirun, srun)");
  plan->add_option("scenario", plan_file, "scenario YAML file")
      ->required()
      ->check(CLI::ExistingFile);
  plan->add_option("-o,--out", plan_dir, "directory to write plan.yaml in")->required();
  CLI::Option* plan_n = plan->add_option("--partitions", plan_parts, "number of processes (ranks)")
                            ->check(CLI::Range(1, 4096));
  CLI::Option* plan_pd =
      plan->add_flag("--per-device", plan_each, "one process per switch and per HCA");
  plan_n->excludes(plan_pd);
  CLI::Option* plan_seed = plan->add_option("--seed", seed, "override the scenario's seed");
  plan->add_option("--duration", duration, "override run.duration (e.g. 2ms, 1s)");

  fabric::RankOptions rank_opts;
  std::string rank_out;
  bool rank_quiet = false, rank_no_plot = false;
  CLI::App* rank = app.add_subcommand(
      "rank", "one process of a planned run, started by mpirun/srun (rank = partition)");
  rank->add_option("plan", rank_opts.plan_dir, "directory `ibemu plan` wrote")->required();
  rank->add_option("-o,--out", rank_out, "results directory, on rank 0's host");
  rank->add_option("--bind", rank_opts.bind,
                   "address to bind on (default *: every interface, reached by host name)");
  rank->add_option("--wait", rank_opts.wait_seconds,
                   "seconds a rank waits for rank 0's endpoint (default 120)")
      ->check(CLI::Range(1.0, 86400.0));
  rank->add_option("--job", rank_opts.job,
                   "an id of this launch, the same on every rank (when the launcher sets none)");
  rank->add_flag("-q,--quiet", rank_quiet, "no progress or banner on stderr");
  rank->add_flag("--no-plot", rank_no_plot, "skip the PNG plot");

  // `ibemu worker` is started by `ibemu run` for each partition; it is not for users.
  std::string launcher, ipc_dir, bind = "127.0.0.1";
  uint32_t partition = 0;
  CLI::App* worker = app.add_subcommand("worker", "one emulator process of a partitioned run");
  worker->group("");
  worker->add_option("--launcher", launcher)->required();
  worker->add_option("--partition", partition)->required();
  worker->add_option("--ipc-dir", ipc_dir);
  worker->add_option("--bind", bind);
  bool watch_parent = false;
  worker->add_flag("--watch-parent", watch_parent);

  std::string vfile;
  CLI::App* validate =
      app.add_subcommand("validate", "check a scenario (and its topology) without running it");
  validate->add_option("scenario", vfile, "scenario YAML file")->required();

  std::string tfile;
  CLI::App* topo =
      app.add_subcommand("topology",
                         "print a topology in ibnetdiscover format: a topology file parsed and "
                         "written back, or a scenario's (generated) topology");
  topo->add_option("file", tfile, "topology file, or scenario .yaml")->required();

  CLI::App* pol = app.add_subcommand("policies", "list the pluggable policies by name");

  std::string up_file;
  fabric::UpOptions up_opts;
  CLI::App* up = app.add_subcommand(
      "up", "start a fabric that stays up (for tools and programs to attach) until `ibemu down`");
  up->add_option("fabric", up_file, "scenario YAML file or ibnetdiscover-format topology file")
      ->required()
      ->check(CLI::ExistingFile);
  up->add_option("--name", up_opts.name, "name of this fabric (default: default)");
  up->add_option("--pace", up_opts.pace,
                 "virtual seconds per wall second (default 1 = real time; 0 = as fast as possible)")
      ->check(CLI::Range(0.0, 1e6));
  up->add_option("-o,--out", up_opts.results_dir, "results directory when it goes down");
  up->add_flag("-q,--quiet", up_opts.quiet, "no banner on stderr");
  std::string up_sm;
  up->add_option("--sm", up_sm,
                 "builtin: LIDs and routes set at load, ports Active; external: ports wait in "
                 "Init for a subnet manager (overrides fabric.subnet_manager)")
      ->check(CLI::IsMember({"builtin", "external"}));
  std::string link_port, link_state, link_name = "default";
  CLI::App* linkc = app.add_subcommand(
      "link", "take a cable of a fabric that is up down, or bring it back (node:port down|up)");
  linkc->add_option("port", link_port, "node:port, e.g. L1-S0:3")->required();
  linkc->add_option("state", link_state, "down or up")
      ->required()
      ->check(CLI::IsMember({"down", "up"}));
  linkc->add_option("--name", link_name, "which fabric (default: default)");
  std::string exec_port, exec_hca, exec_name = "default";
  std::vector<std::string> exec_cmd;
  CLI::App* exec = app.add_subcommand(
      "exec",
      "run a program (ibv_devinfo, ibv_rc_pingpong, smpquery, opensm, ...) on an HCA of a "
      "fabric that is up, through the emulator's libibverbs and libibumad");
  auto* exec_hca_opt =
      exec->add_option("--hca", exec_hca, "the CA node the program runs on, e.g. H1");
  exec->add_option("--port", exec_port, "node:port for the MAD tools, e.g. H1:1")
      ->excludes(exec_hca_opt);
  exec->add_option("--name", exec_name, "which fabric (default: default)");
  exec->add_option("command", exec_cmd, "the program and its arguments (after --)")->required();
  cli::MpirunOptions mpi;
  CLI::App* mpirun = app.add_subcommand(
      "mpirun",
      "run an MPI job (Open MPI's mpirun) on a fabric that is up: each rank behind its own "
      "emulated HCA, every message over the fabric (docs/mpi.md)");
  mpirun->add_option("--name", mpi.fabric, "which fabric (default: default)");
  auto* mpi_hosts =
      mpirun->add_option("--hosts", mpi.hosts,
                         "the rank placement, e.g. H1,H5,H9 (default: the fabric's CAs in order)");
  mpirun
      ->add_option("--hostmap", mpi.hostmap,
                   "a file of '<node> [slots=N]' lines placing the ranks in order")
      ->excludes(mpi_hosts);
  mpirun->add_option("mpirun_args", mpi.mpirun_args, "mpirun's arguments (after --)")->required();
  std::string down_name = "default";
  double down_timeout = 30;
  CLI::App* down = app.add_subcommand("down", "bring down a fabric started with `ibemu up`");
  down->add_option("--name", down_name, "which fabric (default: default)");
  down->add_option("--timeout", down_timeout,
                   "seconds to wait for it to answer and then to end (default 30)")
      ->check(CLI::Range(0.1, 86400.0));
  std::string status_name = "default";
  double status_wait = 0;
  CLI::App* status =
      app.add_subcommand("status", "virtual time, pace and events of a fabric that is up");
  status->add_option("--name", status_name, "which fabric (default: default)");
  status
      ->add_option("--wait", status_wait,
                   "wait up to this many seconds for a fabric that is starting to answer")
      ->check(CLI::Range(0.0, 86400.0));

  CLI11_PARSE(app, argc, argv);
  try {
    if (*worker) return fabric::RunWorker(launcher, partition, ipc_dir, bind, watch_parent);
    if (*rank) {
      rank_opts.progress = !rank_quiet;
      return RunAsRank(rank_opts, rank_out, rank_quiet, rank_no_plot);
    }
    if (*plan) {
      if (plan_parts == 0 && !plan_each)
        throw std::invalid_argument("plan: give --partitions N or --per-device");
      scenario::Scenario s =
          LoadForRun(plan_file, seed, plan_seed->count() > 0, duration, "", false);
      RefuseTraceEnd(s);
      fabric::Plan p = fabric::MakePlan(s, plan_parts, plan_each);
      fabric::WritePlan(p, s, plan_dir);
      std::cout << plan_dir << "/plan.yaml: " << p.partitions() << " partitions; run it with\n"
                << "  mpirun -np " << p.partitions() << " ibemu rank " << plan_dir << "\n"
                << "  srun -n " << p.partitions() << " ibemu rank " << plan_dir << "\n";
      return 0;
    }
    if (*up) {
      bool yaml = up_file.size() > 5 && (up_file.ends_with(".yaml") || up_file.ends_with(".yml"));
      scenario::Scenario s =
          yaml ? scenario::LoadScenario(up_file) : scenario::ScenarioFromTopology(up_file);
      if (!up_sm.empty()) s.subnet_manager = up_sm;
      return fabric::Up(std::move(s), up_opts);
    }
    if (*exec) return ExecOnHca(exec_port, exec_hca, exec_name, exec_cmd);
    if (*mpirun) return cli::Mpirun(mpi);
    if (*linkc) {
      auto [node, port] = ParsePortRef(link_port);
      return fabric::Link(link_name, node, port, link_state == "up");
    }
    if (*down) return fabric::Down(down_name, down_timeout);
    if (*status) return fabric::Status(status_name, status_wait);
    po.spawn = spawn == "local";
    if (!po.spawn && po.transport != "tcp")
      throw std::invalid_argument("--spawn none needs --transport tcp (ipc does not cross hosts)");
    if (*run)
      return Run(file, out, seed, seed_opt->count() > 0, duration, pcap, quiet, no_plot, po,
                 po.per_device || po.partitions > 1);
    if (*validate) {
      scenario::Scenario s = scenario::LoadScenario(vfile);
      std::cout << vfile << ": ok (" << s.topo.nodes.size() << " nodes, " << s.topo.cables.size()
                << " cables, " << s.flows.size() << " traffic entries)\n";
      return 0;
    }
    if (*topo) {
      bool yaml = tfile.ends_with(".yaml") || tfile.ends_with(".yml");
      auto t = yaml
                   ? scenario::LoadScenario(tfile).topo
                   : topology::ParseIbnetdiscoverFile(tfile, {link::Width::k4x, link::Speed::kQDR});
      topology::WriteIbnetdiscover(t, std::cout);
      return 0;
    }
    if (*pol) {
      ListPolicies("VL arbitration (fabric.vlarb.policy)", policy::VlArbiterRegistry::Get());
      ListPolicies("crossbar arbitration (fabric.switch.xbar)",
                   policy::InputArbiterRegistry::Get());
      ListPolicies("input queuing (fabric.switch.queuing)", policy::InputQueuingRegistry::Get());
      ListPolicies("routing (fabric.routing)", routing::RoutingRegistry::Get());
      cc::RegisterMechanisms();
      ListPolicies("congestion control (congestion_control.mechanism)",
                   cc::MechanismRegistry::Get());
      return 0;
    }
  } catch (const std::exception& e) {
    std::cerr << "ibemu: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
