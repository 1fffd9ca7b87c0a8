#include "cc-manager/policy.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cc-manager/cct_generator.h"
#include "common/mad/opensm_cc_options.h"
#include "fabricmgr/subnet.h"

namespace ibemu::ccmgr {
namespace {

void Apply(const CcOption& o, mad::CcSettings* s) {
  if (o.sl >= 0)
    mad::SetPerSlCcOption(o.key, o.sl, o.value, s);
  else
    mad::SetCcOption(o.key, o.value, s);
}

bool IsCcOption(const std::string& k) {
  return mad::SwitchCcOptions().count(k) || mad::CaCcOptions().count(k);
}

// A number for a key that is not one of OpenSM's CC options (the manager's own, a CCT generator's,
// an SL), with the place in the error.
uint64_t Number(const std::string& where, const std::string& key, const std::string& v,
                uint64_t max) {
  try {
    return mad::ParseCcNumber(v, max);
  } catch (const mad::CcOptionError& e) {
    throw PolicyError(where + ": " + key + ": " + e.what());
  }
}

bool Bool(const std::string& where, const std::string& key, const std::string& v) {
  if (v == "TRUE" || v == "true" || v == "1") return true;
  if (v == "FALSE" || v == "false" || v == "0") return false;
  throw PolicyError(where + ": " + key + ": '" + v + "' is not TRUE or FALSE");
}

// The manager's own keys, beside OpenSM's.
void SetOwnKey(CcPolicy* p, const std::string& where, const std::string& k, const std::string& v) {
  if (k == "cc_key") {
    p->cc_key = Number(where, k, v, ~uint64_t{0});
  } else if (k == "cc_key_manage") {
    p->manage_key = Bool(where, k, v);
  } else if (k == "cc_key_protect_bit") {
    p->key_protect = Bool(where, k, v);
  } else if (k == "cc_key_lease_period") {
    p->key_lease_period = static_cast<uint16_t>(Number(where, k, v, 0xFFFF));
  } else if (k == "cc_max_outstanding_mads") {
    p->max_outstanding_mads = static_cast<int>(Number(where, k, v, 100000));
    if (p->max_outstanding_mads < 1) throw PolicyError(where + ": " + k + ": must be at least 1");
  }
}

const std::set<std::string> kOwnKeys = {"cc_key", "cc_key_manage", "cc_key_protect_bit",
                                        "cc_key_lease_period", "cc_max_outstanding_mads"};

std::string Where(const std::string& file, const YAML::Node& n) {
  return file + ":" + std::to_string(n.Mark().line + 1);
}

std::string Scalar(const std::string& file, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) throw PolicyError(Where(file, n) + ": " + key + ": expected a value");
  return n.Scalar();
}

// The options of one mapping (fabric-wide or one node's), in order, as CcOptions.
std::vector<CcOption> Options(const std::string& file, const YAML::Node& map,
                              const std::string& path, const std::set<std::string>& allowed) {
  std::vector<CcOption> out;
  for (auto it = map.begin(); it != map.end(); ++it) {
    std::string k = it->first.as<std::string>(), p = path.empty() ? k : path + "." + k;
    const YAML::Node v = it->second;
    if (!allowed.count(k)) throw PolicyError(Where(file, it->first) + ": " + p + ": unknown key");
    if (!IsCcOption(k)) continue;
    if (!mad::IsPerSlCcOption(k)) {
      out.push_back({k, -1, Scalar(file, v, p), it->first.Mark().line + 1});
      continue;
    }
    if (!v.IsMap())
      throw PolicyError(Where(file, v) + ": " + p +
                        ": expected a map of SL (0..15) to value, e.g. {0: 150}");
    for (const auto& kv : v) {
      int sl = static_cast<int>(Number(Where(file, kv.first), p, Scalar(file, kv.first, p), 15));
      out.push_back({k, sl, Scalar(file, kv.second, p), kv.first.Mark().line + 1});
    }
  }
  return out;
}

// Checks every option by applying it to a scratch copy, so that a bad value is refused at load
// with its place, not when a node appears.
void Check(const std::string& file, const std::string& path, const std::vector<CcOption>& opts,
           mad::CcSettings s) {
  for (const CcOption& o : opts) {
    try {
      Apply(o, &s);
    } catch (const mad::CcOptionError& e) {
      throw PolicyError(file + ":" + std::to_string(o.line) + ": " + path + o.key +
                        (o.sl >= 0 ? "." + std::to_string(o.sl) : "") + ": " + e.what());
    }
  }
}

std::vector<uint16_t> Generated(const std::string& file, const YAML::Node& n) {
  if (!n.IsMap()) throw PolicyError(Where(file, n) + ": cct: expected a mapping");
  CctGenerator g;
  for (auto it = n.begin(); it != n.end(); ++it) {
    std::string k = it->first.as<std::string>();
    std::string v = Scalar(file, it->second, "cct." + k);
    std::string at = Where(file, it->first);
    if (k == "generator") {
      g.kind = v;
    } else if (k == "entries") {
      g.entries = static_cast<int>(Number(at, "cct.entries", v, 1000));
    } else if (k == "shift") {
      g.shift = static_cast<int>(Number(at, "cct.shift", v, 1000));
    } else if (k == "multiplier") {
      g.multiplier = static_cast<int>(Number(at, "cct.multiplier", v, 1u << 20));
    } else if (k == "at") {
      g.at = static_cast<int>(Number(at, "cct.at", v, 1000));
    } else {
      throw PolicyError(at + ": cct." + k +
                        ": unknown key; expected generator, entries, shift, multiplier, at");
    }
  }
  try {
    return GenerateCct(g);
  } catch (const std::invalid_argument& e) {
    throw PolicyError(Where(file, n) + ": cct." + e.what());
  }
}

// CCTI_Min must be reachable: no more than the table's last index.
void CheckCctiMin(const std::string& where, const mad::CcSettings& s) {
  int limit = s.cct.empty() ? 0 : static_cast<int>(s.cct.size()) - 1;
  mad::CaCongestionSetting effective;
  effective.Apply(s.ca);
  int sl = effective.SlWithCctiMinAbove(limit);
  if (sl >= 0)
    throw PolicyError(where + ": cc_ca_cong_setting_ccti_min of SL " + std::to_string(sl) + " is " +
                      std::to_string(effective.sl[sl].ccti_min) + ", beyond CCTI_Limit " +
                      std::to_string(limit) + " of cc_cct");
}

}  // namespace

mad::CcSettings CcPolicy::For(const std::string& name, uint64_t guid) const {
  mad::CcSettings s = sent;
  for (const std::string& id : {name, fabricmgr::GuidString(guid)}) {
    auto it = node_options.find(id);
    if (it == node_options.end()) continue;
    for (const CcOption& o : it->second) Apply(o, &s);
  }
  return s;
}

mad::SwitchPortCongestionSetting CcPolicy::PortFor(const std::string& name, uint64_t guid,
                                                   int port) const {
  for (const std::string& id : {name, fabricmgr::GuidString(guid)}) {
    auto it = port_settings.find({id, port});
    if (it != port_settings.end()) return it->second;
  }
  return {};
}

void CcPolicy::SetOption(const std::string& node, const CcOption& o) {
  if (!IsCcOption(o.key)) throw PolicyError(o.key + ": not a congestion-control option");
  if (mad::IsPerSlCcOption(o.key) != (o.sl >= 0))
    throw PolicyError(o.key +
                      (o.sl >= 0 ? ": not a per-SL option" : ": needs an SL: `set KEY SL VALUE`"));
  mad::CcSettings probe = node.empty() ? sent : For(node, 0);
  try {
    Apply(o, &probe);
  } catch (const mad::CcOptionError& e) {
    throw PolicyError(o.key + ": " + e.what());
  }
  CheckCctiMin("the change", probe);
  if (!node.empty()) {
    node_options[node].push_back(o);
    return;
  }
  // A fabric-wide change must leave every node with options of its own consistent too (a
  // shorter table under a node's CCTI_Min): checked before anything changes.
  CcPolicy after = *this;
  after.sent = probe;
  for (const auto& [name, options] : node_options)
    CheckCctiMin("the change, for " + name, after.For(name, 0));
  sent = probe;
}

void CcPolicy::SetPortOption(const std::string& node, int port, const std::string& key,
                             const std::string& value) {
  mad::SwitchPortCongestionSetting e = PortFor(node, 0, port);
  e.valid = true;
  try {
    if (key == "control_type")
      e.control_type = static_cast<uint8_t>(mad::ParseCcNumber(value, 1));
    else if (key == "threshold")
      e.threshold = static_cast<uint8_t>(mad::ParseCcNumber(value, 15));
    else if (key == "packet_size")
      e.packet_size = static_cast<uint8_t>(mad::ParseCcNumber(value, 255));
    else if (key == "marking_rate")
      e.marking_rate = static_cast<uint16_t>(mad::ParseCcNumber(value, 0xFFFF));
    else if (key == "valid")
      e.valid = mad::ParseCcNumber(value, 1) != 0;
    else
      throw PolicyError(key +
                        ": not a port setting (control_type, threshold, packet_size, "
                        "marking_rate, valid)");
  } catch (const mad::CcOptionError& x) {
    throw PolicyError(key + ": " + x.what());
  }
  port_settings[{node, port}] = e;
}

CcPolicy LoadOpenSmConf(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PolicyError(path + ": cannot be read");
  CcPolicy p;
  p.file = path;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string where = path + ":" + std::to_string(line_no);
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key;
    if (!(words >> key)) continue;
    std::string rest;
    std::getline(words >> std::ws, rest);
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back()))) rest.pop_back();
    if (kOwnKeys.count(key)) {
      SetOwnKey(&p, where, key, rest);
      continue;
    }
    if (!IsCcOption(key)) {
      // The rest of opensm.conf is the SM's; a cc_ name we do not know is a typo.
      if (key.rfind("cc_", 0) == 0)
        throw PolicyError(where + ": " + key + ": not a congestion-control option of OpenSM");
      continue;
    }
    if (key == "cc_cct" && rest == "(null)") continue;
    try {
      if (mad::IsPerSlCcOption(key)) {
        std::istringstream sv(rest);
        std::string sl_text, value, extra;
        if (!(sv >> sl_text >> value) || (sv >> extra))
          throw mad::CcOptionError("expected '<sl> <value>'");
        int sl = static_cast<int>(mad::ParseCcNumber(sl_text, 15));
        mad::SetPerSlCcOption(key, sl, value, &p.sent);
      } else {
        mad::SetCcOption(key, rest, &p.sent);
      }
    } catch (const mad::CcOptionError& e) {
      throw PolicyError(where + ": " + key + ": " + e.what());
    }
  }
  CheckCctiMin(path, p.sent);
  return p;
}

namespace {

CcPolicy ReadYamlPolicy(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {  // the rest of yaml-cpp's refusals: LoadYamlPolicy
    throw PolicyError(path + ": cannot be read");
  }
  CcPolicy p;
  if (root.IsNull()) {
    p.file = path;
    return p;
  }
  if (!root.IsMap()) throw PolicyError(path + ": expected a mapping of policy keys");
  // An opensm.conf's CC section first, then this file's keys on top.
  if (YAML::Node base = root["opensm_conf"]; base.IsDefined()) {
    std::filesystem::path f = Scalar(path, base, "opensm_conf");
    if (f.is_relative()) f = std::filesystem::path(path).parent_path() / f;
    try {
      p = LoadOpenSmConf(f.string());
    } catch (const PolicyError& e) {
      throw PolicyError(Where(path, base) + ": opensm_conf: " + e.what());
    }
  }
  p.file = path;
  std::set<std::string> top = mad::SwitchCcOptions();
  top.insert(mad::CaCcOptions().begin(), mad::CaCcOptions().end());
  top.insert(kOwnKeys.begin(), kOwnKeys.end());
  for (const char* k : {"opensm_conf", "cct", "switches", "cas", "switch_ports"}) top.insert(k);
  for (auto it = root.begin(); it != root.end(); ++it) {
    std::string k = it->first.as<std::string>();
    if (kOwnKeys.count(k)) SetOwnKey(&p, Where(path, it->first), k, Scalar(path, it->second, k));
  }
  std::vector<CcOption> all = Options(path, root, "", top);
  Check(path, "", all, p.sent);
  for (const CcOption& o : all) Apply(o, &p.sent);
  if (YAML::Node g = root["cct"]; g.IsDefined()) {
    if (root["cc_cct"].IsDefined())
      throw PolicyError(Where(path, g) + ": cct: give cc_cct or cct, not both");
    p.sent.cct = Generated(path, g);
  }
  // Point at the option if it is here, else at the file (a table made shorter).
  auto ccti_min_at = [&](const YAML::Node& map) {
    YAML::Node o = map["cc_ca_cong_setting_ccti_min"];
    return o.IsDefined() ? Where(path, o) : path;
  };
  CheckCctiMin(ccti_min_at(root), p.sent);
  auto per_node = [&](const char* section, const std::set<std::string>& keys) {
    YAML::Node list = root[section];
    if (!list.IsDefined()) return;
    if (!list.IsMap())
      throw PolicyError(Where(path, list) + ": " + section + ": expected a map of node to options");
    for (auto it = list.begin(); it != list.end(); ++it) {
      std::string node = it->first.as<std::string>(), np = std::string(section) + "." + node;
      if (!it->second.IsMap())
        throw PolicyError(Where(path, it->second) + ": " + np + ": expected a mapping");
      std::vector<CcOption> own = Options(path, it->second, np, keys);
      mad::CcSettings s = p.sent;
      Check(path, np + ".", own, s);
      for (const CcOption& o : own) Apply(o, &s);
      CheckCctiMin(ccti_min_at(it->second) + ": " + np, s);
      auto& list_for = p.node_options[node];
      list_for.insert(list_for.end(), own.begin(), own.end());
    }
  };
  per_node("switches", mad::SwitchCcOptions());
  per_node("cas", mad::CaCcOptions());
  if (YAML::Node ports = root["switch_ports"]; ports.IsDefined()) {
    if (!ports.IsMap())
      throw PolicyError(Where(path, ports) + ": switch_ports: expected a map of \"switch:port\"");
    for (auto it = ports.begin(); it != ports.end(); ++it) {
      std::string at = it->first.as<std::string>(), pp = "switch_ports." + at;
      size_t colon = at.rfind(':');
      int port = -1;
      if (colon != std::string::npos) {
        try {
          size_t used = 0;
          port = std::stoi(at.substr(colon + 1), &used);
          if (used != at.size() - colon - 1) port = -1;
        } catch (const std::exception&) {
        }
      }
      if (port < 1 || port > 254)
        throw PolicyError(Where(path, it->first) + ": " + pp + ": expected \"switch:port\"");
      if (!it->second.IsMap())
        throw PolicyError(Where(path, it->second) + ": " + pp + ": expected a mapping");
      for (auto f = it->second.begin(); f != it->second.end(); ++f) {
        std::string k = f->first.as<std::string>();
        try {
          p.SetPortOption(at.substr(0, colon), port, k, Scalar(path, f->second, pp + "." + k));
        } catch (const PolicyError& e) {
          throw PolicyError(Where(path, f->first) + ": " + pp + "." + e.what());
        }
      }
    }
  }
  return p;
}

}  // namespace

CcPolicy LoadYamlPolicy(const std::string& path) {
  // yaml-cpp's own exceptions (a key that is a list, a value of the wrong kind) are bad input
  // like any other: refused with the place, never let out to the daemon.
  try {
    return ReadYamlPolicy(path);
  } catch (const YAML::Exception& e) {
    throw PolicyError(path + (e.mark.is_null() ? "" : ":" + std::to_string(e.mark.line + 1)) +
                      ": " + e.msg);
  }
}

CcPolicy LoadPolicy(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  return ext == ".yaml" || ext == ".yml" ? LoadYamlPolicy(path) : LoadOpenSmConf(path);
}

}  // namespace ibemu::ccmgr
