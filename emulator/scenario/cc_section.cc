#include "emulator/scenario/cc_section.h"

#include <cctype>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "emulator/cc/mechanism.h"

namespace ibemu::scenario {
namespace {

// OpenSM's option names (opensm.conf), so that a configuration moves between the two unchanged.
const std::set<std::string> kSwitchKeys = {"cc_sw_cong_setting_control_map",
                                           "cc_sw_cong_setting_victim_mask",
                                           "cc_sw_cong_setting_credit_mask",
                                           "cc_sw_cong_setting_threshold",
                                           "cc_sw_cong_setting_packet_size",
                                           "cc_sw_cong_setting_credit_starvation_threshold",
                                           "cc_sw_cong_setting_credit_starvation_return_delay",
                                           "cc_sw_cong_setting_marking_rate"};
const std::set<std::string> kCaKeys = {"cc_ca_cong_setting_port_control",
                                       "cc_ca_cong_setting_control_map",
                                       "cc_ca_cong_setting_ccti_timer",
                                       "cc_ca_cong_setting_ccti_increase",
                                       "cc_ca_cong_setting_trigger_threshold",
                                       "cc_ca_cong_setting_ccti_min",
                                       "cc_cct"};
constexpr size_t kMaxCctEntries = 128;  // mgmt::CcState's table, and OpenSM's limit

class Reader {
 public:
  Reader(const YamlChecks& c, const Scenario& s) : c_(c), s_(s) {}

  // A number written as a YAML integer or as "0x..." hex, at most `max`.
  uint64_t Number(const YAML::Node& n, const std::string& path, uint64_t max) const {
    std::string v = c_.Scalar(n);
    uint64_t x = 0;
    try {
      size_t used = 0;
      x = std::stoull(v, &used, 0);
      if (used != v.size() || v.empty() || v[0] == '-') throw std::invalid_argument(v);
    } catch (const std::exception&) {
      c_.Fail(n, path, "'" + v + "' is not a number (decimal or 0x hex)");
    }
    if (x > max) c_.Fail(n, path, v + " is out of range (0.." + std::to_string(max) + ")");
    return x;
  }

  // A 256-bit port mask as OpenSM writes it: 0x and up to 64 hex digits, bit n = port n.
  std::array<uint8_t, 32> Mask(const YAML::Node& n, const std::string& path) const {
    std::string v = c_.Scalar(n);
    if (v.rfind("0x", 0) != 0 || v.size() < 3 || v.size() > 66)
      c_.Fail(n, path, "'" + v + "' is not a 256-bit mask (0x and up to 64 hex digits)");
    std::array<uint8_t, 32> m{};
    std::string hex = v.substr(2);
    for (size_t i = 0; i < hex.size(); ++i) {
      char ch = hex[hex.size() - 1 - i];
      if (!std::isxdigit(static_cast<unsigned char>(ch))) c_.Fail(n, path, "bad hex digit");
      int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : std::tolower(ch) - 'a' + 10;
      m[31 - i / 2] |= static_cast<uint8_t>(d << (4 * (i % 2)));
    }
    return m;
  }

  // "shift:multiplier" (CCT entries, CS_ReturnDelay): shift 0..3, multiplier 0..16383.
  uint16_t ShiftMult(const YAML::Node& n, const std::string& path, const std::string& v) const {
    size_t colon = v.find(':');
    unsigned shift = 0, mult = 0;
    char extra = 0;
    if (colon == std::string::npos ||
        std::sscanf(v.c_str(), "%u:%u%c", &shift, &mult, &extra) != 2 || shift > 3 || mult > 0x3FFF)
      c_.Fail(n, path, "'" + v + "' is not shift:multiplier (shift 0..3, multiplier 0..16383)");
    return static_cast<uint16_t>(shift << 14 | mult);
  }

  // A per-SL option: OpenSM repeats "<option> <sl> <value>" lines; here a map {sl: value}.
  std::vector<std::pair<int, uint64_t>> PerSl(const YAML::Node& n, const std::string& path,
                                              uint64_t max) const {
    if (!n.IsMap()) c_.Fail(n, path, "expected a map of SL (0..15) to value, e.g. {0: 150}");
    std::vector<std::pair<int, uint64_t>> v;
    for (const auto& kv : n) {
      int sl = static_cast<int>(Number(kv.first, path, 15));
      v.emplace_back(sl, Number(kv.second, path + "." + std::to_string(sl), max));
    }
    return v;
  }

  // The cc_sw_* and cc_ca_* keys of one mapping into `out` (starting from `out` as it is).
  void Settings(const YAML::Node& n, const std::string& path, const std::set<std::string>& keys,
                CcSettings* out, mgmt::SwitchCongestionSetting* sw_given,
                mgmt::CaCongestionSetting* ca_given) const {
    c_.CheckKeys(n, path, keys);
    for (auto it = n.begin(); it != n.end(); ++it) {
      std::string k = it->first.as<std::string>(), p = path + "." + k;
      if (k == "cc_key") continue;      // the caller's
      const YAML::Node v = it->second;  // a copy: the iterator hands out temporaries
      mgmt::SwitchCongestionSetting& sw = *sw_given;
      mgmt::CaCongestionSetting& ca = *ca_given;
      if (k == "cc_sw_cong_setting_control_map") {
        sw.control_map = static_cast<uint32_t>(Number(v, p, 0x1F));
      } else if (k == "cc_sw_cong_setting_victim_mask") {
        sw.victim_mask = Mask(v, p);
      } else if (k == "cc_sw_cong_setting_credit_mask") {
        sw.credit_mask = Mask(v, p);
      } else if (k == "cc_sw_cong_setting_threshold") {
        sw.threshold = static_cast<uint8_t>(Number(v, p, 15));
      } else if (k == "cc_sw_cong_setting_packet_size") {
        sw.packet_size = static_cast<uint8_t>(Number(v, p, 255));
      } else if (k == "cc_sw_cong_setting_credit_starvation_threshold") {
        sw.cs_threshold = static_cast<uint8_t>(Number(v, p, 15));
      } else if (k == "cc_sw_cong_setting_credit_starvation_return_delay") {
        sw.cs_return_delay = ShiftMult(v, p, c_.Scalar(v));
      } else if (k == "cc_sw_cong_setting_marking_rate") {
        sw.marking_rate = static_cast<uint16_t>(Number(v, p, 0xFFFF));
      } else if (k == "cc_ca_cong_setting_port_control") {
        ca.port_control = static_cast<uint16_t>(Number(v, p, 1));
      } else if (k == "cc_ca_cong_setting_control_map") {
        ca.control_map = static_cast<uint16_t>(Number(v, p, 0xFFFF));
      } else if (k == "cc_ca_cong_setting_ccti_timer") {
        for (auto [sl, x] : PerSl(v, p, 0xFFFF)) ca.sl[sl].ccti_timer = static_cast<uint16_t>(x);
      } else if (k == "cc_ca_cong_setting_ccti_increase") {
        for (auto [sl, x] : PerSl(v, p, 0xFF)) ca.sl[sl].ccti_increase = static_cast<uint8_t>(x);
      } else if (k == "cc_ca_cong_setting_trigger_threshold") {
        for (auto [sl, x] : PerSl(v, p, 0xFF))
          ca.sl[sl].trigger_threshold = static_cast<uint8_t>(x);
      } else if (k == "cc_ca_cong_setting_ccti_min") {
        for (auto [sl, x] : PerSl(v, p, 0xFF)) ca.sl[sl].ccti_min = static_cast<uint8_t>(x);
      } else if (k == "cc_cct") {
        out->cct.clear();
        std::stringstream list(c_.Scalar(v));
        for (std::string e; std::getline(list, e, ',');) out->cct.push_back(ShiftMult(v, p, e));
        if (out->cct.size() > kMaxCctEntries)
          c_.Fail(v, p, std::to_string(out->cct.size()) + " entries; the table holds 128");
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
void LoadMechanism(const YAML::Node& n, const YamlChecks& checks, CcConfig* cc) {
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
  try {
    cc::MechanismRegistry::Get().Make(cc->mechanism, cc->params);
  } catch (const policy::ParamError& e) {
    throw ScenarioError(checks.file() + ":" + std::to_string(e.line()) + ": " + path +
                        ".parameters." + e.what() + " (mechanism " + cc->mechanism + ")");
  }
}

}  // namespace

void LoadCongestionControl(const YAML::Node& n, const YamlChecks& checks, Scenario* s) {
  if (!n.IsDefined() || n.IsNull()) return;
  const std::string path = "congestion_control";
  checks.CheckKeys(n, path, {"mechanism", "parameters", "ib", "switches", "switch_ports", "cas"});
  Reader r(checks, *s);
  CcConfig& cc = s->cc;
  LoadMechanism(n, checks, &cc);
  // What a CC manager sends: the fields as given, applied through the Control_Maps.
  mgmt::SwitchCongestionSetting sw_sent;
  mgmt::CaCongestionSetting ca_sent;
  YAML::Node ib = n["ib"];
  if (ib.IsDefined()) {
    std::set<std::string> keys = kSwitchKeys;
    keys.insert(kCaKeys.begin(), kCaKeys.end());
    keys.insert("cc_key");
    YAML::Node key = ib["cc_key"];
    if (key.IsDefined()) cc.cc_key = r.Number(key, path + ".ib.cc_key", ~uint64_t{0});
    r.Settings(ib, path + ".ib", keys, &cc.all, &sw_sent, &ca_sent);
    cc.all.sw.Apply(sw_sent);
    cc.all.ca.Apply(ca_sent);
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
      CcSettings own = cc.all;
      mgmt::SwitchCongestionSetting sw = sw_sent;
      mgmt::CaCongestionSetting ca = ca_sent;
      r.Settings(it->second, np, keys, &own, &sw, &ca);
      own.sw.Apply(sw);
      own.ca.Apply(ca);
      r.CheckCctiMin(it->second, np, own);
      cc.node[node] = own;
    }
  };
  per_node("switches", kSwitchKeys, topology::NodeType::kSwitch);
  per_node("cas", kCaKeys, topology::NodeType::kCa);

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
