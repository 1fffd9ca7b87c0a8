#include "emulator/fabric/plan.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "emulator/fabric/fabric.h"
#include "emulator/fabric/partitioned_runner.h"
#include "emulator/scenario/yaml_checks.h"

namespace ibemu::fabric {

namespace {

// A YAML double-quoted scalar: any path reads back as itself.
std::string Quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

uint32_t Plan::partitions() const {
  return lp_partition.empty() ? 0 : *std::max_element(lp_partition.begin(), lp_partition.end()) + 1;
}

Plan MakePlan(const scenario::Scenario& s, int partitions, bool per_device) {
  Plan p;
  p.scenario = std::filesystem::absolute(s.file).string();
  p.seed = s.seed;
  p.duration = s.duration;
  p.measure_from = s.measure_from;
  p.measure_to = s.measure_to;
  p.mode = per_device ? "per-device" : "partitioned";
  p.lp_partition = PlanPartitions(s, partitions, per_device);
  return p;
}

void WritePlan(const Plan& p, const scenario::Scenario& s, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::string file = dir + "/plan.yaml";
  std::ofstream out(file);
  if (!out) throw std::runtime_error(file + ": cannot write");
  uint32_t n = p.partitions();
  out << "# A partition plan written by `ibemu plan`. Start one process per partition with an\n"
      << "# existing launcher, e.g.\n"
      << "#   mpirun -np " << n << " ibemu rank " << dir << "\n"
      << "#   srun -n " << n << " ibemu rank " << dir << "\n"
      << "scenario: " << Quoted(p.scenario) << "\n"
      << "seed: " << p.seed << "\n"
      << "duration_ps: " << p.duration << "\n"
      << "measure_from_ps: " << p.measure_from << "\n"
      << "measure_to_ps: " << p.measure_to << "\n"
      << "mode: " << p.mode << "\n"
      << "partitions: " << n << "\n"
      << "# the partition (rank) of every logical process, in LP order: the nodes of the\n"
      << "# topology, then the side band if the CC mechanism has one\n"
      << "lp_partition: [";
  for (size_t i = 0; i < p.lp_partition.size(); ++i)
    out << (i ? (i % 32 ? ", " : ",\n  ") : "") << p.lp_partition[i];
  out << "]\n# the devices of each partition, for reading\ndevices:\n";
  for (uint32_t k = 0; k < n; ++k) {
    out << "  " << k << ": [";
    bool first = true;
    for (size_t i = 0; i < p.lp_partition.size() && i < s.topo.nodes.size(); ++i)
      if (p.lp_partition[i] == k) {
        out << (first ? "" : ", ") << s.topo.nodes[i].name;
        first = false;
      }
    out << "]\n";
  }
  if (!out) throw std::runtime_error(file + ": write failed");
}

Plan ReadPlan(const std::string& dir) {
  std::string file = dir + "/plan.yaml";
  if (!std::filesystem::exists(file))
    throw std::runtime_error(file + ": no such file (write one with `ibemu plan`)");
  scenario::YamlChecks c(file);
  YAML::Node y;
  try {
    y = YAML::LoadFile(file);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(file + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  c.CheckKeys(y, "",
              {"scenario", "seed", "duration_ps", "measure_from_ps", "measure_to_ps", "mode",
               "partitions", "lp_partition", "devices"});
  auto need = [&](const char* key) {
    if (!y[key]) c.Fail(y, key, "missing");
    return y[key];
  };
  auto num = [&](const char* key, int64_t lo) {
    YAML::Node n = need(key);
    try {
      int64_t v = n.as<int64_t>();
      if (v < lo) c.Fail(n, key, "must be at least " + std::to_string(lo));
      return v;
    } catch (const YAML::Exception&) {
      c.Fail(n, key, "'" + c.Scalar(n) + "' is not an integer");
    }
  };
  Plan p;
  p.scenario = c.Scalar(need("scenario"));
  p.seed = static_cast<uint64_t>(num("seed", 0));
  p.duration = num("duration_ps", 1);
  p.measure_from = num("measure_from_ps", 0);
  p.measure_to = num("measure_to_ps", 0);
  p.mode = c.Scalar(need("mode"));
  if (p.mode != "partitioned" && p.mode != "per-device")
    c.Fail(y["mode"], "mode", "'" + p.mode + "': expected partitioned or per-device");
  int64_t n = num("partitions", 1);
  YAML::Node lps = need("lp_partition");
  if (!lps.IsSequence()) c.Fail(lps, "lp_partition", "expected a list");
  for (size_t i = 0; i < lps.size(); ++i) {
    std::string field = "lp_partition[" + std::to_string(i) + "]";
    try {
      int64_t v = lps[i].as<int64_t>();
      if (v < 0 || v >= n)
        c.Fail(lps[i], field,
               std::to_string(v) + " is not a partition (0 to " + std::to_string(n - 1) + ")");
      p.lp_partition.push_back(static_cast<uint32_t>(v));
    } catch (const YAML::Exception&) {
      c.Fail(lps[i], field, "'" + c.Scalar(lps[i]) + "' is not an integer");
    }
  }
  if (p.partitions() != static_cast<uint32_t>(n))
    c.Fail(lps, "lp_partition",
           "uses " + std::to_string(p.partitions()) + " partitions; partitions says " +
               std::to_string(n));
  return p;
}

scenario::Scenario LoadPlannedScenario(const Plan& p) {
  scenario::Scenario s = scenario::LoadScenario(p.scenario);
  s.seed = p.seed;
  s.duration = p.duration;
  s.measure_from = p.measure_from;
  s.measure_to = p.measure_to;
  if (p.lp_partition.size() != NumLps(s))
    throw std::runtime_error("the plan has " + std::to_string(p.lp_partition.size()) +
                             " logical processes; " + p.scenario + " now gives " +
                             std::to_string(NumLps(s)) + " (write the plan again)");
  return s;
}

}  // namespace ibemu::fabric
