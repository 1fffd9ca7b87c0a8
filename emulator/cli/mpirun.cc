#include "emulator/cli/mpirun.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "emulator/cli/host_libs.h"
#include "emulator/fabric/fabric_service.h"

namespace ibemu::cli {
namespace {

std::string Join(const std::vector<std::string>& v, size_t max = 8) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? "," : "") + v[i];
  if (v.size() > max) s += ",...";
  return s;
}

// Open MPI's components for a job whose every message crosses the emulated fabric: ob1 over the
// openib BTL (and self, a rank's messages to itself), so neither shared memory (vader) nor TCP
// carries MPI traffic between ranks that share this machine. The openib BTL declines InfiniBand
// ports in Open MPI 4.x unless allowed. Set in the environment, so a --mca on the command line
// still overrides them, as Open MPI ranks its sources.
constexpr const char* kOmpiEnv[][2] = {
    {"OMPI_MCA_pml", "ob1"},
    {"OMPI_MCA_btl", "self,openib"},
    {"OMPI_MCA_btl_openib_allow_ib", "1"},
    // One-sided operations through the BTLs, not UCX (which would look for mlx5 devices of its
    // own and warn that it found none).
    {"OMPI_MCA_osc", "^ucx"},
    // Every rank stands for a host of its own, so a job has as many ranks as the fabric has hosts
    // to place them on, not as this machine has cores: oversubscribed, and not bound to cores
    // (pinning eight ranks to two cores would make them take turns by core, not by need).
    {"OMPI_MCA_rmaps_base_oversubscribe", "1"},
    {"OMPI_MCA_hwloc_base_binding_policy", "none"},
};

// Open MPI 4's mpirun options that take values, so that a value is not read as the program
// (which ends mpirun's own arguments). Options not listed are taken as flags: the rank count
// check is a convenience, and mpirun itself still refuses what it cannot place.
int ValuesOf(const std::string& opt) {
  static const std::set<std::string> two = {"--mca",  "-mca",  "--gmca",  "-gmca",
                                            "--pmca", "-pmca", "--pgmca", "-pgmca"};
  static const std::set<std::string> one = {"-x",
                                            "--hostfile",
                                            "-hostfile",
                                            "--machinefile",
                                            "-machinefile",
                                            "--default-hostfile",
                                            "-H",
                                            "--host",
                                            "-host",
                                            "--map-by",
                                            "-map-by",
                                            "--rank-by",
                                            "-rank-by",
                                            "--bind-to",
                                            "-bind-to",
                                            "--rankfile",
                                            "-rf",
                                            "--output-filename",
                                            "-output-filename",
                                            "--wdir",
                                            "-wdir",
                                            "--wd",
                                            "-wd",
                                            "--prefix",
                                            "-prefix",
                                            "--preload-files",
                                            "--path",
                                            "-path",
                                            "--timeout",
                                            "-timeout",
                                            "--app",
                                            "-app",
                                            "--tune",
                                            "-tune",
                                            "--am",
                                            "-am",
                                            "--npernode",
                                            "-npernode",
                                            "-N",
                                            "--npersocket",
                                            "-npersocket",
                                            "--ppr",
                                            "--cpu-set",
                                            "-cpu-set",
                                            "--cpus-per-proc",
                                            "-cpus-per-proc",
                                            "--cpus-per-rank",
                                            "-cpus-per-rank",
                                            "--report-uri",
                                            "--report-pid",
                                            "--stdin",
                                            "-stdin",
                                            "--personality",
                                            "--launch-agent",
                                            "-launch-agent",
                                            "--debugger",
                                            "--max-vm-size",
                                            "--tmpdir",
                                            "-tmpdir",
                                            "--xterm",
                                            "-xterm",
                                            "--ompi-server",
                                            "-ompi-server"};
  return two.count(opt) ? 2 : one.count(opt) ? 1 : 0;
}

}  // namespace

int RankCount(const std::vector<std::string>& args) {
  // Each app context (contexts are separated by ":", MPMD) names its own rank count; the job's is
  // their sum, and unknown when a context gives none.
  int total = 0;
  for (size_t i = 0; i < args.size();) {
    int n = 0;
    for (; i < args.size() && args[i] != ":"; ++i) {
      const std::string& a = args[i];
      std::string value;
      if ((a == "-np" || a == "-n" || a == "--np" || a == "-c" || a == "--n") &&
          i + 1 < args.size())
        value = args[++i];
      else if (a.starts_with("--np=") || a.starts_with("-np="))
        value = a.substr(a.find('=') + 1);
      else if (a.empty() || a[0] != '-')
        break;  // the program: what follows, up to the next ":", is its own
      else {
        i += static_cast<size_t>(ValuesOf(a));
        continue;
      }
      char* end = nullptr;
      long v = std::strtol(value.c_str(), &end, 10);
      if (!end || *end || v <= 0)
        throw std::invalid_argument("'" + a + " " + value + "': not a rank count");
      n = static_cast<int>(v);
    }
    if (n == 0) return 0;
    total += n;
    while (i < args.size() && args[i] != ":") ++i;
    if (i < args.size()) ++i;  // past the ":"
  }
  return total;
}

std::vector<std::string> PlaceRanks(const MpirunOptions& o, const std::vector<std::string>& cas,
                                    int np) {
  std::set<std::string> known(cas.begin(), cas.end());
  std::vector<std::string> nodes;
  std::string source;
  auto check = [&](const std::string& node, const std::string& where) {
    if (!known.count(node))
      throw std::invalid_argument(where + ": '" + node + "' is not a CA of fabric '" + o.fabric +
                                  "' (its CAs: " + Join(cas) + ")");
  };
  if (!o.hostmap.empty()) {
    std::ifstream in(o.hostmap);
    if (!in) throw std::invalid_argument(o.hostmap + ": cannot read: " + std::strerror(errno));
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
      std::istringstream words(line);
      std::string node, extra;
      if (!(words >> node)) continue;
      std::string where = o.hostmap + ":" + std::to_string(n);
      check(node, where);
      long slots = 1;
      while (words >> extra) {
        char* end = nullptr;
        if (extra.starts_with("slots=")) slots = std::strtol(extra.c_str() + 6, &end, 10);
        if (!extra.starts_with("slots=") || !end || *end || slots < 1 || slots > 4096)
          throw std::invalid_argument(where + ": '" + extra +
                                      "': expected slots=<1..4096> after the node");
      }
      nodes.insert(nodes.end(), static_cast<size_t>(slots), node);
    }
    if (nodes.empty()) throw std::invalid_argument(o.hostmap + ": names no node");
    source = o.hostmap;
  } else if (!o.hosts.empty()) {
    std::stringstream ss(o.hosts);
    for (std::string node; std::getline(ss, node, ',');) {
      if (node.empty()) throw std::invalid_argument("--hosts '" + o.hosts + "': an empty name");
      check(node, "--hosts");
      nodes.push_back(node);
    }
    source = "--hosts";
  } else {
    nodes = cas;
    source = "fabric '" + o.fabric + "'";
    if (nodes.empty()) throw std::invalid_argument("fabric '" + o.fabric + "' has no CA");
  }
  if (np > static_cast<int>(nodes.size()))
    throw std::invalid_argument(std::to_string(np) + " ranks, but " + source + " places only " +
                                std::to_string(nodes.size()) +
                                (o.hostmap.empty() && o.hosts.empty() ? " (its CAs)" : "") +
                                "; a --hostmap line '<node> slots=N' puts N ranks behind one HCA");
  if (np > 0) nodes.resize(static_cast<size_t>(np));
  return nodes;
}

int Mpirun(const MpirunOptions& o) {
  int np = RankCount(o.mpirun_args);
  std::vector<std::string> ranks = PlaceRanks(o, fabric::ListCas(o.fabric), np);
  setenv("LD_LIBRARY_PATH", HostLibraryPath().c_str(), 1);
  setenv("IBEMU_FABRIC", o.fabric.c_str(), 1);
  std::string map;
  for (const std::string& n : ranks) map += (map.empty() ? "" : ",") + n;
  setenv("IBEMU_HCA_MAP", map.c_str(), 1);
  // Either would put every rank behind one node.
  unsetenv("IBEMU_VERBS_HCA");
  unsetenv("IBEMU_UMAD_PORT");
  for (const auto& kv : kOmpiEnv) setenv(kv[0], kv[1], 1);
  const char* prog = std::getenv("IBEMU_MPIRUN");
  std::string mpirun = prog && *prog ? prog : "mpirun";
  std::vector<std::string> argv_s{mpirun};
  argv_s.insert(argv_s.end(), o.mpirun_args.begin(), o.mpirun_args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cerr << "ibemu mpirun: fabric '" << o.fabric << "', ranks on " << Join(ranks, 16) << "\n";
  execvp(argv[0], argv.data());
  std::cerr << "ibemu: error: cannot run " << mpirun << ": " << std::strerror(errno)
            << " (install openmpi-bin, or set IBEMU_MPIRUN)\n";
  return 127;
}

}  // namespace ibemu::cli
