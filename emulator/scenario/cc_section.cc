#include "emulator/scenario/cc_section.h"

#include <cctype>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "common/mad/opensm_cc_options.h"
#include "emulator/cc/mechanism.h"

namespace ibemu::scenario {
namespace {

class Reader {
 public:
  Reader(const YamlChecks& c, const Scenario& s) : c_(c), s_(s) {}

  // A number written as a YAML integer or as "0x..." hex, at most `max`.
  uint64_t Number(const YAML::Node& n, const std::string& path, uint64_t max) const {
    try {
      return mad::ParseCcNumber(c_.Scalar(n), max);
    } catch (const mad::CcOptionError& e) {
      c_.Fail(n, path, e.what());
    }
  }

  // The cc_sw_* and cc_ca_* keys of one mapping into `sent`, the fields a Set would carry.
  void Settings(const YAML::Node& n, const std::string& path, const std::set<std::string>& keys,
                CcSettings* sent) const {
    c_.CheckKeys(n, path, keys);
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k = it->first.as<std::string>(), p = path + "." + k;
      if (k == "cc_key") continue;      // the caller's
      const YAML::Node v = it->second;  // a copy: the iterator hands out temporaries
      if (!mad::IsPerSlCcOption(k)) {
        try {
          mad::SetCcOption(k, c_.Scalar(v), sent);
        } catch (const mad::CcOptionError& e) {
          c_.Fail(v, p, e.what());
        }
        continue;
      }
      // OpenSM repeats "<option> <sl> <value>" lines; here a map {sl: value}.
      if (!v.IsMap()) c_.Fail(v, p, "expected a map of SL (0..15) to value, e.g. {0: 150}");
      for (const auto& kv : v) {
        int sl = static_cast<int>(Number(kv.first, p, 15));
        try {
          mad::SetPerSlCcOption(k, sl, c_.Scalar(kv.second), sent);
        } catch (const mad::CcOptionError& e) {
          c_.Fail(kv.second, p + "." + std::to_string(sl), e.what());
        }
      }
    }
  }

  // CCTI_Min must be reachable: no more than the table's last index (CCTI_Limit).
  void CheckCctiMin(const YAML::Node& parent, const std::string& parent_path,
                    const CcSettings& cs) const {
    // Point at the option if this mapping has it, else at the mapping (a table made shorter).
    const YAML::Node option = parent["cc_ca_cong_setting_ccti_min"];
    const bool here = option.IsDefined();
    const YAML::Node& n = here ? option : parent;
    const std::string path = parent_path + (here ? ".cc_ca_cong_setting_ccti_min" : "");
    int limit = cs.cct.empty() ? 0 : static_cast<int>(cs.cct.size()) - 1;
    int sl = cs.ca.SlWithCctiMinAbove(limit);
    if (sl >= 0)
      c_.Fail(n, path,
              "cc_ca_cong_setting_ccti_min of SL " + std::to_string(sl) + " is " +
                  std::to_string(cs.ca.sl[sl].ccti_min) + ", beyond CCTI_Limit " +
                  std::to_string(limit) + " of cc_cct");
  }

  int NodeOf(const YAML::Node& n, const std::string& path, const std::string& name,
             topology::NodeType type) const {
    int node = s_.topo.FindNode(name);
    if (node < 0) c_.Fail(n, path, "no node named '" + name + "' in the topology");
    if (s_.topo.nodes[node].type != type)
      c_.Fail(n, path,
              "'" + name + "' is not a " +
                  (type == topology::NodeType::kSwitch ? "switch" : "channel adapter"));
    return node;
  }

 private:
  const YamlChecks& c_;
  const Scenario& s_;
};

// The mechanism and its parameters, checked by the mechanism itself now, before anything runs.
void LoadMechanism(const YAML::Node& n, const YamlChecks& checks, int data_vls, CcConfig* cc) {
  cc::RegisterMechanisms();
  const std::string path = "congestion_control";
  YAML::Node m = n["mechanism"];
  if (m.IsDefined()) {
    cc->mechanism = checks.Scalar(m);
    if (!cc::MechanismRegistry::Get().Has(cc->mechanism))
      checks.Fail(m, path + ".mechanism",
                  "unknown mechanism '" + cc->mechanism +
                      "'; known: " + cc::MechanismRegistry::Get().Names());
  }
  YAML::Node params = n["parameters"];
  if (params.IsDefined()) {
    if (!params.IsMap()) checks.Fail(params, path + ".parameters", "expected a mapping");
    for (auto it = params.begin(); it != params.end(); ++it) {
      const YAML::Node v = it->second;
      cc->params.Set(it->first.as<std::string>(), checks.Scalar(v), v.Mark().line + 1);
    }
  }
  std::unique_ptr<cc::Mechanism> made;
  try {
    made = cc::MechanismRegistry::Get().Make(cc->mechanism, cc->params);
  } catch (const policy::ParamError& e) {
    throw ScenarioError(checks.file() + ":" + std::to_string(e.line()) + ": " + path +
                        ".parameters." + e.what() + " (mechanism " + cc->mechanism + ")");
  }
  std::string why = made->CheckFabric(data_vls);
  if (!why.empty())
    checks.Fail(params.IsDefined() ? params : n, path + ".parameters",
                why + " (mechanism " + cc->mechanism + ")");
}

}  // namespace

void LoadCongestionControl(const YAML::Node& n, const YamlChecks& checks, Scenario* s) {
  if (!n.IsDefined() || n.IsNull()) return;
  const std::string path = "congestion_control";
  checks.CheckKeys(n, path, {"mechanism", "parameters", "ib", "switches", "switch_ports", "cas"});
  Reader r(checks, *s);
  CcConfig& cc = s->cc;
  LoadMechanism(n, checks, s->data_vls, &cc);
  // What a CC manager sends: the fields as given, applied through the Control_Maps.
  CcSettings sent;
  YAML::Node ib = n["ib"];
  if (ib.IsDefined()) {
    std::set<std::string> keys = mad::SwitchCcOptions();
    keys.insert(mad::CaCcOptions().begin(), mad::CaCcOptions().end());
    keys.insert("cc_key");
    YAML::Node key = ib["cc_key"];
    if (key.IsDefined()) cc.cc_key = r.Number(key, path + ".ib.cc_key", ~uint64_t{0});
    r.Settings(ib, path + ".ib", keys, &sent);
    cc.all.sw.Apply(sent.sw);
    cc.all.ca.Apply(sent.ca);
    cc.all.cct = sent.cct;
    r.CheckCctiMin(ib, path + ".ib", cc.all);
  }
  // Per node: the fabric-wide values, then the node's own on top (as a second Set would).
  auto per_node = [&](const char* section, const std::set<std::string>& keys,
                      topology::NodeType type) {
    YAML::Node list = n[section];
    if (!list.IsDefined()) return;
    std::string p = path + "." + section;
    if (!list.IsMap()) checks.Fail(list, p, "expected a map of node name to settings");
    for (auto it = list.begin(); it != list.end(); ++it) {
      std::string name = it->first.as<std::string>(), np = p + "." + name;
      int node = r.NodeOf(it->first, np, name, type);
      CcSettings own = cc.all, node_sent = sent;
      r.Settings(it->second, np, keys, &node_sent);
      own.sw.Apply(node_sent.sw);
      own.ca.Apply(node_sent.ca);
      own.cct = node_sent.cct;
      r.CheckCctiMin(it->second, np, own);
      cc.node[node] = own;
    }
  };
  per_node("switches", mad::SwitchCcOptions(), topology::NodeType::kSwitch);
  per_node("cas", mad::CaCcOptions(), topology::NodeType::kCa);

  YAML::Node ports = n["switch_ports"];
  if (ports.IsDefined()) {
    std::string p = path + ".switch_ports";
    if (!ports.IsMap()) checks.Fail(ports, p, "expected a map of \"switch:port\" to settings");
    for (auto it = ports.begin(); it != ports.end(); ++it) {
      std::string at = it->first.as<std::string>(), pp = p + "." + at;
      size_t colon = at.rfind(':');
      if (colon == std::string::npos) checks.Fail(it->first, pp, "expected \"switch:port\"");
      int node = r.NodeOf(it->first, pp, at.substr(0, colon), topology::NodeType::kSwitch);
      std::string port_text = at.substr(colon + 1);
      int port = -1;
      try {
        size_t used = 0;
        port = std::stoi(port_text, &used);
        if (used != port_text.size()) port = -1;
      } catch (const std::exception&) {
      }
      if (port < 1 || port > s->topo.nodes[node].num_ports)
        checks.Fail(it->first, pp,
                    "port '" + port_text + "' is not a port of " + at.substr(0, colon) + " (1.." +
                        std::to_string(s->topo.nodes[node].num_ports) + ")");
      checks.CheckKeys(it->second, pp,
                       {"control_type", "threshold", "packet_size", "marking_rate"});
      mgmt::SwitchPortCongestionSetting e;
      e.valid = true;
      const YAML::Node v = it->second;  // a copy: the iterator hands out temporaries
      if (v["control_type"])
        e.control_type = static_cast<uint8_t>(r.Number(v["control_type"], pp + ".control_type", 1));
      if (v["threshold"])
        e.threshold = static_cast<uint8_t>(r.Number(v["threshold"], pp + ".threshold", 15));
      if (v["packet_size"])
        e.packet_size = static_cast<uint8_t>(r.Number(v["packet_size"], pp + ".packet_size", 255));
      if (v["marking_rate"])
        e.marking_rate =
            static_cast<uint16_t>(r.Number(v["marking_rate"], pp + ".marking_rate", 0xFFFF));
      cc.switch_ports[{node, port}] = e;
    }
  }
}

}  // namespace ibemu::scenario
