#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <set>

#include "common/routing/routing_engine.h"
#include "common/topology/generators.h"
#include "common/topology/ibnetdiscover_parser.h"
#include "emulator/policy/builtin.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/input_queuing.h"
#include "emulator/scenario/cc_section.h"
#include "emulator/scenario/scenario.h"
#include "emulator/scenario/trace_file.h"
#include "emulator/scenario/yaml_checks.h"

namespace ibemu::scenario {
namespace {

std::string Trim(std::string s) {
  auto ns = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), ns));
  s.erase(std::find_if(s.rbegin(), s.rend(), ns).base(), s.end());
  return s;
}

bool SplitNumberUnit(const std::string& in, double* num, std::string* unit) {
  std::string s = Trim(in);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' ||
                          s[i] == 'e' || s[i] == 'E' || s[i] == '-' || s[i] == '+'))
    ++i;
  if (i == 0) return false;
  try {
    size_t used = 0;
    *num = std::stod(s.substr(0, i), &used);
    if (used != i) return false;
  } catch (...) {
    return false;
  }
  *unit = Trim(s.substr(i));
  return true;
}

// Reads one scenario file, keeping the path of the field being read for error messages.
class Loader {
 public:
  explicit Loader(std::string file) : file_(file), checks_(std::move(file)) {}

  [[noreturn]] void Fail(const YAML::Node& n, const std::string& field, const std::string& msg) {
    checks_.Fail(n, field, msg);
  }

  template <typename T>
  T Get(const YAML::Node& parent, const char* key, const std::string& path, T def) {
    YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return def;
    try {
      return n.as<T>();
    } catch (const YAML::Exception&) {
      Fail(n, path + "." + key, "cannot read value '" + Scalar(n) + "'");
    }
  }
  std::string Scalar(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : "<not a scalar>"; }

  SimTime Duration(const YAML::Node& parent, const char* key, const std::string& path,
                   SimTime def) {
    YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return def;
    SimTime t;
    if (!n.IsScalar() || !ParseDuration(n.Scalar(), &t) || t < 0)
      Fail(n, path + "." + key, "'" + Scalar(n) + "' is not a duration (e.g. 5ms, 100us, 2s)");
    return t;
  }
  int64_t Rate(const YAML::Node& parent, const char* key, const std::string& path, int64_t def) {
    YAML::Node n = parent[key];
    if (!n.IsDefined() || n.IsNull()) return def;
    int64_t r;
    if (!n.IsScalar() || !ParseRate(n.Scalar(), &r) || r <= 0)
      Fail(n, path + "." + key, "'" + Scalar(n) + "' is not a rate (e.g. 13Gbps, 500Mbps)");
    return r;
  }
  link::LinkRate LinkRateOf(const YAML::Node& parent, const char* key, const std::string& path,
                            link::LinkRate def) {
    YAML::Node n = parent[key];
    if (!n.IsDefined()) return def;
    std::string s = Scalar(n);
    // "4xQDR" or "4x QDR"
    size_t x = s.find_first_of("xX");
    if (x != std::string::npos) {
      auto w = link::ParseWidth(s.substr(0, x + 1));
      auto sp = link::ParseSpeed(Trim(s.substr(x + 1)));
      if (w && sp) return link::LinkRate(*w, *sp);
    }
    Fail(n, path + "." + key, "'" + s + "' is not a link rate (e.g. 4xQDR, 1xSDR, 4xEDR)");
  }
  template <typename Reg>
  std::string PolicyName(const YAML::Node& parent, const char* key, const std::string& path,
                         const std::string& def, const Reg& reg) {
    std::string v = Get<std::string>(parent, key, path, def);
    if (!reg.Has(v))
      Fail(parent[key], path + "." + key, "unknown policy '" + v + "'; known: " + reg.Names());
    return v;
  }

  Scenario Load();

 private:
  void LoadTopology(const YAML::Node& n, Scenario* s);
  void LoadFabric(const YAML::Node& n, Scenario* s);
  void LoadTraffic(const YAML::Node& n, Scenario* s);
  void LoadTrafficEntry(const YAML::Node& n, const std::string& path, Scenario* s);
  struct Endpoint {
    std::string node;
    int port = 1;
    uint16_t lid = 0;
    int index = -1;  // in topo.nodes: a lookup by name is a scan over every node
  };
  Endpoint ResolveEndpoint(const YAML::Node& n, const std::string& path, const Scenario& s);
  std::vector<Endpoint> ResolveList(const YAML::Node& parent, const char* key,
                                    const std::string& path, const Scenario& s);
  void CheckKeys(const YAML::Node& n, const std::string& path, std::set<std::string> allowed);

  std::string file_;
  YamlChecks checks_;
  std::vector<std::vector<uint16_t>> lids_;  // [node][port]
  std::vector<Endpoint> all_cas_;
};

void Loader::CheckKeys(const YAML::Node& n, const std::string& path,
                       std::set<std::string> allowed) {
  checks_.CheckKeys(n, path, allowed);
}

Scenario Loader::Load() {
  policy::RegisterBuiltins();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file_);
  } catch (const YAML::BadFile&) {
    throw ScenarioError(file_ + ":0: file: cannot open scenario file");
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(file_ + ":" + std::to_string(e.mark.line + 1) + ": syntax: " + e.msg);
  }
  Scenario s;
  s.file = file_;
  CheckKeys(root, "",
            {"name", "description", "seed", "topology", "fabric", "congestion_control", "traffic",
             "run", "output"});
  s.name = Get<std::string>(root, "name", "", std::filesystem::path(file_).stem().string());
  s.description = Get<std::string>(root, "description", "", "");
  s.seed = Get<uint64_t>(root, "seed", "", 1);
  if (!root["topology"].IsDefined()) Fail(root, "topology", "missing");
  LoadTopology(root["topology"], &s);
  LoadFabric(root["fabric"], &s);
  LoadCongestionControl(root["congestion_control"], checks_, &s);

  YAML::Node run = root["run"];
  if (run.IsDefined()) {
    CheckKeys(run, "run", {"duration", "interval", "measure", "end"});
    s.duration = Duration(run, "duration", "run", s.duration);
    s.interval = Duration(run, "interval", "run", s.interval);
    if (s.duration <= 0) Fail(run["duration"], "run.duration", "must be positive");
    if (s.interval <= 0) Fail(run["interval"], "run.interval", "must be positive");
    YAML::Node m = run["measure"];
    if (m.IsDefined()) {
      CheckKeys(m, "run.measure", {"from", "to"});
      s.measure_from = Duration(m, "from", "run.measure", 0);
      s.measure_to = Duration(m, "to", "run.measure", s.duration);
      if (s.measure_from >= s.measure_to || s.measure_to > s.duration)
        Fail(m, "run.measure", "need 0 <= from < to <= run.duration");
    }
  }
  if (s.measure_to == 0) s.measure_to = s.duration;

  LoadTraffic(root["traffic"], &s);
  if (run.IsDefined() && run["end"].IsDefined()) {
    std::string end = Get<std::string>(run, "end", "run", "duration");
    if (end != "duration" && end != "traces")
      Fail(run["end"], "run.end", "'" + end + "': use duration or traces");
    s.end_with_traces = end == "traces";
    bool traces = false;
    for (const FlowInfo& f : s.flows) traces = traces || f.trace_ranks > 0;
    if (s.end_with_traces && !traces)
      Fail(run["end"], "run.end", "no traffic entry is a trace: nothing would end the run");
  }

  YAML::Node out = root["output"];
  if (out.IsDefined()) {
    CheckKeys(out, "output", {"dir", "plot", "pcap", "pcap_until"});
    s.out_dir = Get<std::string>(out, "dir", "output", "");
    s.plot = Get<bool>(out, "plot", "output", true);
    s.pcap = Get<std::string>(out, "pcap", "output", "");
    s.pcap_until = Duration(out, "pcap_until", "output", INT64_MAX);
  }
  return s;
}

void Loader::LoadTopology(const YAML::Node& n, Scenario* s) {
  CheckKeys(n, "topology",
            {"file", "generator", "link", "host_link", "isl", "k", "n", "radix", "leaves", "spines",
             "hosts_per_leaf", "dims", "hosts_per_switch", "a", "p", "h", "g", "cable_length_m",
             "direction"});
  link::LinkRate qdr(link::Width::k4x, link::Speed::kQDR);
  link::LinkRate rate = LinkRateOf(n, "link", "topology", qdr);
  s->default_cable_m = Get<double>(n, "cable_length_m", "topology", 2.0);
  try {
    if (n["file"].IsDefined()) {
      std::filesystem::path p = Get<std::string>(n, "file", "topology", "");
      if (p.is_relative()) p = std::filesystem::path(file_).parent_path() / p;
      s->topology_source = p.lexically_normal().string();
      s->topo = topology::ParseIbnetdiscoverFile(s->topology_source, rate);
    } else {
      std::string g = Get<std::string>(n, "generator", "topology", "");
      s->topology_source = "generator " + g;
      auto i = [&](const char* k, int def) { return Get<int>(n, k, "topology", def); };
      if (g == "testbed") {
        s->topo = topology::TestBed(
            LinkRateOf(n, "host_link", "topology", {link::Width::k4x, link::Speed::kDDR}),
            LinkRateOf(n, "isl", "topology", qdr));
      } else if (g == "kary-ntree") {
        s->topo = topology::KaryNTree(i("k", 4), i("n", 3), rate);
      } else if (g == "kary-nfly") {
        // A bidirectional k-ary n-fly is a k-ary n-tree, its butterfly wiring the tree's
        // (docs/topologies.md). A unidirectional one needs hosts with a port on each side.
        std::string dir = Get<std::string>(n, "direction", "topology", "bidirectional");
        if (dir != "bidirectional")
          Fail(n["direction"], "topology.direction",
               "'" + dir +
                   "': only bidirectional k-ary n-flies are generated (docs/topologies.md says "
                   "how a unidirectional one would attach its hosts)");
        s->topo = topology::KaryNTree(i("k", 4), i("n", 3), rate);
      } else if (g == "fat-tree") {
        s->topo = topology::FatTree2Level(i("radix", 36), i("leaves", 36), i("spines", 18),
                                          i("hosts_per_leaf", 18), rate);
      } else if (g == "fat-tree-648") {
        s->topo = topology::FatTree648(rate);
      } else if (g == "fat-tree-3level") {
        s->topo = topology::FatTree3Level(i("radix", 36), rate);
      } else if (g == "torus" || g == "mesh") {
        std::vector<int> dims = Get<std::vector<int>>(n, "dims", "topology", {4, 4});
        s->topo = topology::Torus(dims, i("hosts_per_switch", 1), rate, g == "torus");
      } else if (g == "dragonfly") {
        s->topo = topology::Dragonfly(i("a", 4), i("p", 2), i("h", 2), i("g", 9), rate);
      } else {
        Fail(n["generator"].IsDefined() ? n["generator"] : n, "topology.generator",
             "'" + g +
                 "' is not a generator; use file: or one of testbed, kary-ntree, kary-nfly, "
                 "fat-tree, fat-tree-648, fat-tree-3level, torus, mesh, dragonfly");
      }
    }
  } catch (const topology::TopologyError& e) {
    // The topology's own error names its file and line; say which scenario pulled it in.
    throw ScenarioError(std::string(e.what()) + " (topology of " + file_ + ")");
  }
  if (n["cable_length_m"].IsDefined()) {
    if (s->default_cable_m <= 0 || s->default_cable_m > 10000)
      Fail(n["cable_length_m"], "topology.cable_length_m", "must be in (0, 10000] metres");
    for (topology::Cable& c : s->topo.cables) c.length_m = s->default_cable_m;
  }
  // LIDs as the fabric will assign them, for resolving traffic endpoints.
  routing::LidMap lm = routing::LidMap::Assign(s->topo);
  lids_ = lm.lid;
  for (int c : s->topo.Cas())
    for (int p = 1; p <= s->topo.nodes[c].num_ports; ++p)
      if (lids_[c][p]) all_cas_.push_back({s->topo.nodes[c].name, p, lids_[c][p], c});
}

void Loader::LoadFabric(const YAML::Node& n, Scenario* s) {
  if (!n.IsDefined()) return;
  CheckKeys(n, "fabric",
            {"data_vls", "mtu", "vl_buffer_bytes", "phy_latency", "fc_latency", "routing", "sl2vl",
             "vlarb", "switch", "hca", "subnet_manager", "mgmt_latency"});
  s->data_vls = Get<int>(n, "data_vls", "fabric", 1);
  static const std::set<int> kVlCaps = {1, 2, 4, 8, 15};
  if (!kVlCaps.count(s->data_vls))
    Fail(n["data_vls"], "fabric.data_vls",
         std::to_string(s->data_vls) + " data VLs: IB ports support 1, 2, 4, 8 or 15 (VLCap)");
  int mtu = Get<int>(n, "mtu", "fabric", 2048);
  if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
    Fail(n["mtu"], "fabric.mtu", std::to_string(mtu) + " is not an IB MTU (256..4096)");
  s->hca.mtu = static_cast<uint32_t>(mtu);
  int buf = Get<int>(n, "vl_buffer_bytes", "fabric", 8 * 1024);
  uint32_t mtu_blocks = (static_cast<uint32_t>(mtu) + 26 + 63) / 64;
  auto blocks_of = [&](const YAML::Node& node, const std::string& field, int bytes) {
    uint32_t b = static_cast<uint32_t>(bytes) / 64;
    // Cut-through needs room for one whole packet in every buffer (IBA 7.9.4).
    if (bytes <= 0 || b < mtu_blocks)
      Fail(node, field,
           std::to_string(bytes) + " bytes cannot hold one MTU packet (" +
               std::to_string(mtu_blocks * 64) + " bytes)");
    return b;
  };
  s->sw.vl_buffer_blocks = s->hca.vl_buffer_blocks =
      blocks_of(n["vl_buffer_bytes"], "fabric.vl_buffer_bytes", buf);
  s->phy_latency = Duration(n, "phy_latency", "fabric", 0);
  s->fc_latency = Duration(n, "fc_latency", "fabric", 0);
  s->mgmt_latency = Duration(n, "mgmt_latency", "fabric", link::kPsPerUs);
  s->subnet_manager = Get<std::string>(n, "subnet_manager", "fabric", "builtin");
  if (s->subnet_manager != "builtin" && s->subnet_manager != "external")
    Fail(n["subnet_manager"], "fabric.subnet_manager",
         "'" + s->subnet_manager + "': use builtin (LIDs and routes set at load) or external");
  s->routing = PolicyName(n, "routing", "fabric", "minhop", routing::RoutingRegistry::Get());
  s->sw.data_vls = s->hca.data_vls = s->data_vls;

  if (n["sl2vl"].IsDefined()) {
    YAML::Node m = n["sl2vl"];
    if (!m.IsSequence() || m.size() != 16) Fail(m, "fabric.sl2vl", "need a list of 16 VLs");
    for (size_t i = 0; i < 16; ++i) {
      int vl = -1;
      try {
        vl = m[i].as<int>();
      } catch (const YAML::Exception&) {
        Fail(m[i], "fabric.sl2vl[" + std::to_string(i) + "]", "not a VL number");
      }
      if (vl < 0 || (vl >= s->data_vls && vl != 15))
        Fail(m[i], "fabric.sl2vl[" + std::to_string(i) + "]",
             "VL " + std::to_string(vl) + " is beyond the " + std::to_string(s->data_vls) +
                 " data VLs configured in fabric.data_vls");
      s->sl2vl.push_back(static_cast<uint8_t>(vl));
    }
  }

  YAML::Node va = n["vlarb"];
  std::string vlarb = "vlarb.ib";
  policy::VlArbConfig vc;
  if (va.IsDefined()) {
    CheckKeys(va, "fabric.vlarb", {"policy", "high", "low", "limit_of_high_priority"});
    vlarb = PolicyName(va, "policy", "fabric.vlarb", "vlarb.ib", policy::VlArbiterRegistry::Get());
    int limit = Get<int>(va, "limit_of_high_priority", "fabric.vlarb", 0);
    if (limit < 0 || limit > 255)
      Fail(va["limit_of_high_priority"], "fabric.vlarb.limit_of_high_priority",
           "must be 0..255 (units of 4 KiB; 255 = unlimited)");
    vc.limit_of_high_priority = static_cast<uint8_t>(limit);
    for (const char* which : {"high", "low"}) {
      YAML::Node t = va[which];
      if (!t.IsDefined()) continue;
      std::string path = std::string("fabric.vlarb.") + which;
      if (!t.IsSequence() || t.size() > 64) Fail(t, path, "need a list of up to 64 [VL, weight]");
      for (size_t i = 0; i < t.size(); ++i) {
        std::string ep = path + "[" + std::to_string(i) + "]";
        if (!t[i].IsSequence() || t[i].size() != 2) Fail(t[i], ep, "need [VL, weight]");
        int vl = 0, w = 0;
        try {
          vl = t[i][0].as<int>();
          w = t[i][1].as<int>();
        } catch (const YAML::Exception&) {
          Fail(t[i], ep, "need [VL, weight] as two numbers");
        }
        if (vl < 0 || vl >= s->data_vls)
          Fail(t[i], ep,
               "VL " + std::to_string(vl) + " is beyond the " + std::to_string(s->data_vls) +
                   " data VLs configured in fabric.data_vls");
        if (w < 0 || w > 255) Fail(t[i], ep, "weight must be 0..255");
        (which[0] == 'h' ? vc.high : vc.low)
            .push_back({static_cast<uint8_t>(vl), static_cast<uint8_t>(w)});
      }
    }
  }
  s->sw.vlarb = s->hca.vlarb = vlarb;
  s->sw.vlarb_config = s->hca.vlarb_config = vc;

  YAML::Node sw = n["switch"];
  if (sw.IsDefined()) {
    CheckKeys(sw, "fabric.switch",
              {"latency", "speedup", "queuing", "xbar", "vl_buffer_bytes", "bypass_limit",
               "output_buffer_bytes", "read_ports"});
    s->sw.latency = Duration(sw, "latency", "fabric.switch", s->sw.latency);
    double sp = Get<double>(sw, "speedup", "fabric.switch", 1.0);
    if (sp < 1.0 || sp > 16.0) Fail(sw["speedup"], "fabric.switch.speedup", "must be 1..16");
    s->sw.speedup_milli = static_cast<int>(sp * 1000 + 0.5);
    s->sw.bypass_limit = Get<int>(sw, "bypass_limit", "fabric.switch", 0);
    if (s->sw.bypass_limit < 0 || s->sw.bypass_limit > 1000000)
      Fail(sw["bypass_limit"], "fabric.switch.bypass_limit", "must be 0..1000000");
    s->queuing = PolicyName(sw, "queuing", "fabric.switch", "queuing.voqsw",
                            policy::InputQueuingRegistry::Get());
    s->sw.xbar = PolicyName(sw, "xbar", "fabric.switch", "xbar.roundrobin",
                            policy::InputArbiterRegistry::Get());
    if (sw["vl_buffer_bytes"].IsDefined())
      s->sw.vl_buffer_blocks = blocks_of(sw["vl_buffer_bytes"], "fabric.switch.vl_buffer_bytes",
                                         Get<int>(sw, "vl_buffer_bytes", "fabric.switch", 0));
    // 0 (the default): no output buffers.
    std::string ports = Get<std::string>(sw, "read_ports", "fabric.switch", "input");
    if (ports != "input" && ports != "queue")
      Fail(sw["read_ports"], "fabric.switch.read_ports",
           "'" + ports + "': use input (one read port per input buffer) or queue (one per queue)");
    s->sw.read_port_per_queue = ports == "queue";
    int obuf = Get<int>(sw, "output_buffer_bytes", "fabric.switch", 0);
    if (obuf != 0)
      s->sw.output_buffer_blocks =
          blocks_of(sw["output_buffer_bytes"], "fabric.switch.output_buffer_bytes", obuf);
  }
  if (s->queuing == "queuing.voqsw-static") {
    // Its credits count each switch's queues, which the sender finds in the routes the builtin
    // subnet manager sets; each queue holds its share of the VL buffer.
    YAML::Node q = sw["queuing"];
    if (s->subnet_manager != "builtin")
      Fail(q, "fabric.switch.queuing",
           "queuing.voqsw-static reads the routes the builtin subnet manager sets; it needs "
           "fabric.subnet_manager: builtin");
    int ports = s->topo.MaxSwitchPorts();
    if (ports > 0 && s->sw.vl_buffer_blocks / static_cast<uint32_t>(ports) < mtu_blocks)
      Fail(q, "fabric.switch.queuing",
           "queuing.voqsw-static gives each of a switch's " + std::to_string(ports) +
               " output queues 1/" + std::to_string(ports) + " of the switch VL buffer (" +
               std::to_string(s->sw.vl_buffer_blocks * 64) + " bytes), less than one MTU packet (" +
               std::to_string(mtu_blocks * 64) + " bytes): raise fabric.vl_buffer_bytes");
    if (ports > 0 && s->sw.output_buffer_blocks > 0 &&
        s->sw.output_buffer_blocks / static_cast<uint32_t>(ports) < mtu_blocks)
      Fail(q, "fabric.switch.queuing",
           "queuing.voqsw-static gives each output queue 1/" + std::to_string(ports) +
               " of fabric.switch.output_buffer_bytes, less than one MTU packet");
  }
  YAML::Node h = n["hca"];
  if (h.IsDefined()) {
    CheckKeys(h, "fabric.hca", {"host_rate", "host_tx_rate", "host_rx_rate", "vl_buffer_bytes"});
    int64_t both = Rate(h, "host_rate", "fabric.hca", 0);
    s->hca.host_tx.bps = Rate(h, "host_tx_rate", "fabric.hca", both);
    s->hca.host_rx.bps = Rate(h, "host_rx_rate", "fabric.hca", both);
    if (h["vl_buffer_bytes"].IsDefined())
      s->hca.vl_buffer_blocks = blocks_of(h["vl_buffer_bytes"], "fabric.hca.vl_buffer_bytes",
                                          Get<int>(h, "vl_buffer_bytes", "fabric.hca", 0));
  }
}

Loader::Endpoint Loader::ResolveEndpoint(const YAML::Node& n, const std::string& path,
                                         const Scenario& s) {
  std::string v = Scalar(n);
  std::string name = v;
  int port = 1;
  size_t colon = v.rfind(':');
  if (colon != std::string::npos) {
    name = v.substr(0, colon);
    try {
      port = std::stoi(v.substr(colon + 1));
    } catch (...) {
      Fail(n, path, "'" + v + "': port after ':' is not a number");
    }
  }
  int node = s.topo.FindNode(name);
  if (node < 0) Fail(n, path, "no node named '" + name + "' in " + s.topology_source);
  const topology::Node& nd = s.topo.nodes[node];
  if (nd.type != topology::NodeType::kCa)
    Fail(n, path, "'" + name + "' is a switch; traffic runs between channel adapters");
  if (port < 1 || port > nd.num_ports)
    Fail(n, path, "'" + name + "' has ports 1.." + std::to_string(nd.num_ports));
  if (!lids_[node][port])
    Fail(n, path, "port " + std::to_string(port) + " of '" + name + "' is not cabled");
  return {name, port, lids_[node][port], node};
}

std::vector<Loader::Endpoint> Loader::ResolveList(const YAML::Node& parent, const char* key,
                                                  const std::string& path, const Scenario& s) {
  YAML::Node n = parent[key];
  std::string p = path + "." + key;
  if (!n.IsDefined() || (n.IsScalar() && n.Scalar() == "all")) return all_cas_;
  std::vector<Endpoint> r;
  if (n.IsScalar()) return {ResolveEndpoint(n, p, s)};
  if (!n.IsSequence()) Fail(n, p, "expected a node, a list of nodes, or 'all'");
  for (size_t i = 0; i < n.size(); ++i)
    r.push_back(ResolveEndpoint(n[i], p + "[" + std::to_string(i) + "]", s));
  return r;
}

void Loader::LoadTraffic(const YAML::Node& n, Scenario* s) {
  if (!n.IsDefined()) return;
  if (!n.IsSequence()) Fail(n, "traffic", "expected a list of traffic entries");
  for (size_t i = 0; i < n.size(); ++i)
    LoadTrafficEntry(n[i], "traffic[" + std::to_string(i) + "]", s);
}

void Loader::LoadTrafficEntry(const YAML::Node& n, const std::string& path, Scenario* s) {
  CheckKeys(n, path,
            {"name",     "pattern",  "src",           "dst",       "sources",  "destinations",
             "hotspots", "fraction", "kind",          "shift",     "lifetime", "period",
             "start",    "stop",     "message_bytes", "sl",        "arrival",  "rate",
             "load",     "on",       "off",           "transport", "file"});
  std::string pattern = Get<std::string>(n, "pattern", path, "flow");
  FlowInfo fi;
  fi.pattern = pattern;
  fi.name = Get<std::string>(n, "name", path, pattern + std::to_string(s->flows.size() + 1));
  for (const FlowInfo& f : s->flows)
    if (f.name == fi.name) Fail(n["name"], path + ".name", "flow '" + fi.name + "' defined twice");
  uint32_t flow = static_cast<uint32_t>(s->flows.size());

  hca::TrafficSource base;
  base.flow = flow;
  base.start = Duration(n, "start", path, 0);
  base.stop = Duration(n, "stop", path, INT64_MAX);
  if (base.stop <= base.start) Fail(n["stop"], path + ".stop", "stop must be after start");
  int msg = Get<int>(n, "message_bytes", path, 65536);
  if (msg <= 0) Fail(n["message_bytes"], path + ".message_bytes", "must be positive");
  base.message_bytes = static_cast<uint32_t>(msg);
  int sl = Get<int>(n, "sl", path, 0);
  if (sl < 0 || sl > 14) Fail(n["sl"], path + ".sl", "SL must be 0..14 (SL15 is for management)");
  int vl = s->sl2vl.empty() ? sl % s->data_vls : s->sl2vl[sl];
  if (vl == 15)
    Fail(n["sl"], path + ".sl", "SL" + std::to_string(sl) + " maps to VL15 in fabric.sl2vl");
  base.sl = static_cast<uint8_t>(sl);
  std::string transport = Get<std::string>(n, "transport", path, "rc");
  if (transport != "rc" && transport != "uc")
    Fail(n["transport"], path + ".transport", "'" + transport + "' is not a transport (rc, uc)");
  base.uc = transport == "uc";
  base.onoff.on = Duration(n, "on", path, 0);
  base.onoff.off = Duration(n, "off", path, 0);
  if ((base.onoff.on > 0) != (base.onoff.off > 0))
    Fail(n["on"].IsDefined() ? n["on"] : n["off"], path + ".on", "give both on and off");

  std::string arrival = Get<std::string>(n, "arrival", path, "");
  double load = Get<double>(n, "load", path, -1);
  int64_t rate = Rate(n, "rate", path, 0);
  if (load > 1.0 || (n["load"].IsDefined() && load <= 0))
    Fail(n["load"], path + ".load", "load is a fraction of the link, in (0, 1]");
  if (arrival.empty()) arrival = (load > 0 || rate > 0) ? "poisson" : "saturate";
  if (arrival == "saturate") {
    base.arrival = hca::Arrival::kSaturate;
  } else if (arrival == "poisson" || arrival == "constant") {
    base.arrival = arrival == "poisson" ? hca::Arrival::kPoisson : hca::Arrival::kConstant;
    if (load <= 0 && rate <= 0)
      Fail(n, path + ".arrival", arrival + " arrivals need a load or a rate");
  } else {
    Fail(n["arrival"], path + ".arrival",
         "'" + arrival + "' is not an arrival process (saturate, poisson, constant)");
  }

  // Each entry expands to (source endpoint, destination set) pairs.
  struct Src {
    Endpoint ep;
    std::vector<hca::TrafficSource::Phase> phases;
    SimTime cycle = 0;
  };
  std::vector<Src> srcs;
  auto without = [](const std::vector<Endpoint>& v, uint16_t lid) {
    std::vector<uint16_t> r;
    for (auto& e : v)
      if (e.lid != lid) r.push_back(e.lid);
    return r;
  };
  // The same, for a list every source draws from: one copy, shared (hca::DestinationList).
  auto shared = [](const std::vector<Endpoint>& v) {
    auto r = std::make_shared<std::vector<uint16_t>>();
    for (auto& e : v) r->push_back(e.lid);
    return std::shared_ptr<const std::vector<uint16_t>>(std::move(r));
  };

  if (pattern == "trace") {
    // A replayed application: its messages come from the file, nothing from arrivals.
    for (const char* k :
         {"src", "dst", "destinations", "hotspots", "fraction", "kind", "shift", "lifetime",
          "period", "stop", "message_bytes", "arrival", "rate", "load", "on", "off"})
      if (n[k].IsDefined())
        Fail(n[k], path + "." + k,
             "a trace takes its messages and times from its file (docs/traces.md)");
    if (!n["file"].IsDefined()) Fail(n, path + ".file", "a trace needs its file");
    std::filesystem::path f = Get<std::string>(n, "file", path, "");
    if (f.is_relative()) f = std::filesystem::path(file_).parent_path() / f;
    fi.trace_file = f.lexically_normal().string();
    auto prog = std::make_shared<hca::TraceProgram>(ReadTraceFile(fi.trace_file));
    std::vector<Endpoint> hosts = ResolveList(n, "sources", path, *s);
    size_t ranks = prog->ranks.size();
    if (hosts.size() < ranks || (n["sources"].IsDefined() && hosts.size() != ranks))
      Fail(n["sources"].IsDefined() ? n["sources"] : n, path + ".sources",
           "the trace has " + std::to_string(ranks) + " ranks and rank i runs on sources[i]; " +
               std::to_string(hosts.size()) + " are given");
    hosts.resize(ranks);
    std::set<uint16_t> used;
    for (const Endpoint& e : hosts) {
      if (!used.insert(e.lid).second)
        Fail(n["sources"], path + ".sources", e.node + " is given to two ranks");
      prog->lid.push_back(e.lid);
    }
    fi.trace_ranks = static_cast<uint32_t>(ranks);
    fi.start = base.start;
    for (uint32_t r = 0; r < ranks; ++r) {
      hca::TrafficSource ts = base;
      ts.port = hosts[r].port;
      ts.trace = prog;
      ts.rank = r;
      s->sources[hosts[r].node].push_back(ts);
    }
    s->flows.push_back(fi);
    return;
  }
  if (pattern == "flow") {
    if (!n["src"].IsDefined()) Fail(n, path + ".src", "a flow needs src");
    if (!n["dst"].IsDefined()) Fail(n, path + ".dst", "a flow needs dst");
    Endpoint a = ResolveEndpoint(n["src"], path + ".src", *s);
    Endpoint b = ResolveEndpoint(n["dst"], path + ".dst", *s);
    if (a.lid == b.lid) Fail(n["dst"], path + ".dst", "a flow cannot go to its own source");
    fi.src = a.node;
    fi.dst = b.node;
    srcs.push_back({a, {{0, {b.lid}, {}}}});
  } else if (pattern == "uniform" || pattern == "hotspot") {
    auto from = ResolveList(n, "sources", path, *s);
    auto to = ResolveList(n, "destinations", path, *s);
    std::vector<Endpoint> hot;
    double frac = 0;
    if (pattern == "hotspot") {
      if (!n["hotspots"].IsDefined()) Fail(n, path + ".hotspots", "hotspot traffic needs hotspots");
      hot = ResolveList(n, "hotspots", path, *s);
      frac = Get<double>(n, "fraction", path, 0.5);
      if (frac <= 0 || frac > 1) Fail(n["fraction"], path + ".fraction", "must be in (0, 1]");
    }
    auto to_lids = shared(to);
    for (auto& e : from) {
      hca::TrafficSource::Phase ph;
      ph.dlids = hca::DestinationList::AllBut(to_lids, e.lid);
      if (pattern == "hotspot") {
        // Weights in 1e6 units: `frac` of the messages to the hotspots, the rest spread evenly.
        std::vector<uint16_t> hl = without(hot, e.lid);
        std::vector<uint16_t> cold;
        for (uint16_t l : without(to, e.lid))
          if (std::find(hl.begin(), hl.end(), l) == hl.end()) cold.push_back(l);
        std::vector<uint16_t> weighted;
        uint32_t acc = 0;
        for (uint16_t l : hl) {
          weighted.push_back(l);
          acc += static_cast<uint32_t>(frac * 1e6 / hl.size());
          ph.cum_weights.push_back(acc);
        }
        for (uint16_t l : cold) {
          weighted.push_back(l);
          acc += static_cast<uint32_t>((1 - frac) * 1e6 / cold.size());
          ph.cum_weights.push_back(acc);
        }
        ph.dlids = std::move(weighted);
      }
      if (ph.dlids.empty()) Fail(n, path, "source " + e.node + " has no destination");
      srcs.push_back({e, {ph}});
    }
  } else if (pattern == "permutation") {
    auto eps = ResolveList(n, "sources", path, *s);
    std::string kind = Get<std::string>(n, "kind", path, "random");
    size_t m = eps.size();
    std::vector<size_t> to(m);
    if (kind == "random") {
      // A derangement drawn from the scenario seed: the same seed, the same pairs.
      std::mt19937_64 rng(s->seed ^ 0x9E3779B97F4A7C15ull ^ flow);
      for (;;) {
        for (size_t i = 0; i < m; ++i) to[i] = i;
        for (size_t i = m; i > 1; --i) std::swap(to[i - 1], to[rng() % i]);
        bool ok = true;
        for (size_t i = 0; i < m; ++i) ok = ok && to[i] != i;
        if (ok || m < 2) break;
      }
    } else if (kind == "shift") {
      int k = Get<int>(n, "shift", path, 1);
      for (size_t i = 0; i < m; ++i) to[i] = (i + static_cast<size_t>(k)) % m;
    } else if (kind == "bit-complement") {
      for (size_t i = 0; i < m; ++i) to[i] = m - 1 - i;
    } else {
      Fail(n["kind"], path + ".kind", "'" + kind + "': use random, shift or bit-complement");
    }
    for (size_t i = 0; i < m; ++i)
      if (to[i] != i) srcs.push_back({eps[i], {{0, {eps[to[i]].lid}, {}}}});
  } else if (pattern == "incast") {
    if (!n["dst"].IsDefined()) Fail(n, path + ".dst", "incast needs dst");
    Endpoint d = ResolveEndpoint(n["dst"], path + ".dst", *s);
    fi.dst = d.node;
    for (auto& e : ResolveList(n, "sources", path, *s))
      if (e.lid != d.lid) srcs.push_back({e, {{0, {d.lid}, {}}}});
  } else if (pattern == "tree") {
    // Paper IV's congestion trees: silent (fixed hotspot), windy (contributors alternate between
    // the hotspot and uniform traffic every `period`), moving (the hotspot changes every
    // `lifetime`, cycling through `hotspots`).
    std::string kind = Get<std::string>(n, "kind", path, "silent");
    if (!n["hotspots"].IsDefined()) Fail(n, path + ".hotspots", "a congestion tree needs hotspots");
    auto hot = ResolveList(n, "hotspots", path, *s);
    auto from = ResolveList(n, "sources", path, *s);
    SimTime life = Duration(n, "lifetime", path, 0);
    SimTime period = Duration(n, "period", path, 0);
    if (kind == "moving" && life <= 0) Fail(n, path + ".lifetime", "moving trees need a lifetime");
    if (kind == "windy" && period <= 0) Fail(n, path + ".period", "windy trees need a period");
    if (kind != "silent" && kind != "moving" && kind != "windy")
      Fail(n["kind"], path + ".kind", "'" + kind + "': use silent, windy or moving");
    // One cycle of phases; the HCA repeats it for as long as the source runs.
    SimTime step = kind == "moving" ? life : period;
    size_t steps = kind == "moving" ? hot.size() : 2;
    auto all_lids = shared(all_cas_);
    for (auto& e : from) {
      std::vector<hca::TrafficSource::Phase> phases;
      if (kind == "silent") {
        phases.push_back({0, without(hot, e.lid), {}});
      } else {
        for (size_t k = 0; k < steps; ++k) {
          hca::TrafficSource::Phase ph;
          ph.from = static_cast<SimTime>(k) * step;
          if (kind == "moving")
            ph.dlids = without({hot[k % hot.size()]}, e.lid);
          else
            ph.dlids = k % 2 == 0 ? hca::DestinationList(without(hot, e.lid))
                                  : hca::DestinationList::AllBut(all_lids, e.lid);
          if (ph.dlids.empty()) ph.dlids = hca::DestinationList::AllBut(all_lids, e.lid);
          phases.push_back(ph);
        }
      }
      bool empty = false;
      for (auto& ph : phases) empty = empty || ph.dlids.empty();
      if (!empty)
        srcs.push_back({e, phases, kind == "silent" ? 0 : step * static_cast<SimTime>(steps)});
    }
  } else {
    Fail(n["pattern"], path + ".pattern",
         "'" + pattern +
             "' is not a pattern (flow, uniform, hotspot, permutation, incast, tree, trace)");
  }
  if (srcs.empty()) Fail(n, path, "this entry produces no traffic");

  for (Src& src : srcs) {
    hca::TrafficSource ts = base;
    ts.port = src.ep.port;
    ts.phases = src.phases;
    ts.cycle = src.cycle;
    if (load > 0) {
      const topology::Cable* c = s->topo.CableAt({src.ep.index, src.ep.port});
      ts.rate_bps = static_cast<int64_t>(load * static_cast<double>(c->rate.data_bps()));
    } else {
      ts.rate_bps = rate;
    }
    s->sources[src.ep.node].push_back(ts);
  }
  s->flows.push_back(fi);
}

}  // namespace

bool ParseDuration(const std::string& in, SimTime* out) {
  double v;
  std::string u;
  if (!SplitNumberUnit(in, &v, &u)) return false;
  static const std::map<std::string, double> kUnits = {{"ps", 1},   {"ns", 1e3}, {"us", 1e6},
                                                       {"µs", 1e6}, {"ms", 1e9}, {"s", 1e12}};
  auto it = kUnits.find(u);
  if (it == kUnits.end()) return false;
  *out = static_cast<SimTime>(v * it->second + 0.5);
  return true;
}

bool ParseRate(const std::string& in, int64_t* bps) {
  double v;
  std::string u;
  if (!SplitNumberUnit(in, &v, &u)) return false;
  static const std::map<std::string, double> kUnits = {
      {"bps", 1},      {"Kbps", 1e3},   {"Mbps", 1e6},   {"Gbps", 1e9}, {"bit/s", 1},
      {"Kbit/s", 1e3}, {"Mbit/s", 1e6}, {"Gbit/s", 1e9}, {"Tbps", 1e12}};
  auto it = kUnits.find(u);
  if (it == kUnits.end()) return false;
  *bps = static_cast<int64_t>(v * it->second + 0.5);
  return true;
}

Scenario LoadScenario(const std::string& path) {
  return Loader(path).Load();
}

Scenario ScenarioFromTopology(const std::string& path) {
  policy::RegisterBuiltins();
  Scenario s;
  s.file = path;
  s.name = std::filesystem::path(path).stem().string();
  s.topology_source = path;
  try {
    s.topo = topology::ParseIbnetdiscoverFile(path, {link::Width::k4x, link::Speed::kQDR});
    routing::LidMap::Assign(s.topo);
  } catch (const std::exception& e) {
    throw ScenarioError(e.what());
  }
  s.plot = false;
  return s;
}

}  // namespace ibemu::scenario
