// A scenario, fully resolved: the topology, every device parameter, the traffic expanded into
// per-HCA sources, and what to measure and write. Loading checks everything before anything runs.
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/policy/params.h"
#include "common/topology/topology.h"
#include "emulator/hca/hca_config.h"
#include "emulator/hca/traffic_source.h"
#include "emulator/mgmt/cc_state.h"
#include "emulator/switch/switch_config.h"

namespace ibemu::scenario {

using link::SimTime;

struct FlowInfo {
  std::string name;
  std::string pattern;
  std::string src, dst;  // node names for single flows; empty for patterns
  // A replayed application (pattern trace): its file, how many ranks, and when it starts.
  std::string trace_file;
  uint32_t trace_ranks = 0;
  SimTime start = 0;
};

// What every Congestion Control Agent holds when the fabric starts, as if a CC manager had
// programmed it with OpenSM's cc_* options (docs/scenarios.md).
using CcSettings = mad::CcSettings;

struct CcConfig {
  // The mechanism on the CC hooks (cc::MechanismRegistry) and its parameters. IB CC is the
  // default, as in the hardware: with the CCAs' settings at zero it marks and throttles nothing.
  std::string mechanism = "ib";
  policy::Params params;
  uint64_t cc_key = 0;
  CcSettings all;                  // every switch and CA
  std::map<int, CcSettings> node;  // [node index]: instead of `all`
  std::map<std::pair<int, int>, mgmt::SwitchPortCongestionSetting> switch_ports;  // (node, port)
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;

  topology::Topology topo;
  std::string topology_source;  // file path or generator description
  double default_cable_m = 2.0;
  SimTime phy_latency = 0;  // added to the cable's propagation delay on every link
  SimTime fc_latency = 0;   // from an FC packet's arrival to its credits being usable
  // Who configures the subnet. "builtin": the emulator assigns LIDs and routes at load and every
  // cabled port starts Active (synthetic-traffic studies). "external": ports start in Init with
  // no LIDs and empty forwarding tables, and a subnet manager (opensm, ibemu-fabricmgr) attached
  // through the libibumad library does it over MADs.
  std::string subnet_manager = "builtin";
  SimTime mgmt_latency = link::kPsPerUs;  // an SMA/PMA's time to answer a MAD

  sw::SwitchConfig sw;
  hca::HcaConfig hca;
  std::string queuing = "queuing.voqsw";
  std::string routing = "minhop";
  int data_vls = 1;
  std::vector<uint8_t> sl2vl;  // optional, 16 entries: applied to every switch and HCA port
  CcConfig cc;

  std::vector<FlowInfo> flows;
  std::map<std::string, std::vector<hca::TrafficSource>> sources;  // by HCA node name

  SimTime duration = link::kPsPerMs;
  SimTime interval = 100 * link::kPsPerUs;
  SimTime measure_from = 0, measure_to = 0;  // window for the summary table; default: all
  // run.end: traces: a one-process run ends with the interval in which its replayed
  // applications have all finished (docs/traces.md), `duration` being the limit.
  bool end_with_traces = false;

  std::string out_dir;  // empty: results/<name>
  bool plot = true;
  std::string pcap;  // capture file; empty: none
  SimTime pcap_until = INT64_MAX;

  int bins() const { return static_cast<int>((duration + interval - 1) / interval); }
};

class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a scenario file; throws ScenarioError naming file, line and field.
Scenario LoadScenario(const std::string& path);
// A scenario with no traffic around an ibnetdiscover-format topology file, every parameter at
// its default: what `ibemu up <topology>` runs.
Scenario ScenarioFromTopology(const std::string& path);
// Parses "5ms", "100 us", "2s", "10ns", "1500ps"; returns false on bad input.
bool ParseDuration(const std::string& s, SimTime* out);
// Parses "13Gbps", "13 Gbit/s", "500Mbps"; bits per second.
bool ParseRate(const std::string& s, int64_t* bps);

}  // namespace ibemu::scenario
