#include "fabricmgr/policy.h"

#include <yaml-cpp/yaml.h>

#include <set>

#include "fabricmgr/subnet.h"

namespace ibemu::fabricmgr {
namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const YAML::Node& n, const std::string& field,
                         const std::string& msg) const {
    int line = n.IsDefined() ? n.Mark().line + 1 : 0;
    throw PolicyError(file_ + ":" + std::to_string(line) + ": " + field + ": " + msg);
  }
  void OnlyKeys(const YAML::Node& map, const std::string& where,
                std::initializer_list<const char*> keys) const {
    if (!map.IsMap()) Fail(map, where, "expected a mapping");
    std::set<std::string> allowed(keys.begin(), keys.end());
    for (const auto& kv : map) {
      std::string k = kv.first.as<std::string>();
      if (!allowed.count(k)) {
        std::string list;
        for (const char* a : keys) list += (list.empty() ? "" : ", ") + std::string(a);
        Fail(kv.first, where.empty() ? k : where + "." + k, "unknown key (known: " + list + ")");
      }
    }
  }
  uint64_t Uint(const YAML::Node& n, const std::string& field, uint64_t max) const {
    if (!n.IsScalar()) Fail(n, field, "expected a number");
    std::string text = n.Scalar();
    uint64_t v = 0;
    try {
      size_t used = 0;
      v = std::stoull(text, &used, 0);
      if (used != text.size() || text[0] == '-') throw std::invalid_argument("x");
    } catch (const std::exception&) {
      Fail(n, field, "'" + text + "' is not a non-negative integer");
    }
    if (v > max) Fail(n, field, std::to_string(v) + " is above " + std::to_string(max));
    return v;
  }
  std::string Text(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) Fail(n, field, "expected a string");
    return n.Scalar();
  }

 private:
  std::string file_;
};

std::vector<VlArbEntry> ReadVlArb(const Reader& r, const YAML::Node& n, const std::string& field) {
  if (!n.IsSequence()) r.Fail(n, field, "expected a list of [VL, weight] pairs");
  if (n.size() > 64) r.Fail(n, field, "at most 64 entries");
  std::vector<VlArbEntry> v;
  for (size_t i = 0; i < n.size(); ++i) {
    const YAML::Node& e = n[i];
    std::string f = field + "[" + std::to_string(i) + "]";
    if (!e.IsSequence() || e.size() != 2) r.Fail(e, f, "expected [VL, weight]");
    v.push_back(
        {static_cast<uint8_t>(r.Uint(e[0], f, 14)), static_cast<uint8_t>(r.Uint(e[1], f, 255))});
  }
  return v;
}

bool Member(const Partition& part, const NodeRecord& n, int port) {
  if (part.all) return true;
  for (const std::string& m : part.members)
    if (m == n.name() || m == n.description || m == GuidString(n.guid) ||
        m == GuidString(n.ports[port].guid))
      return true;
  return false;
}

}  // namespace

std::array<uint16_t, 32> PKeyBlockFor(const Policy& p, const NodeRecord& node, int port) {
  std::array<uint16_t, 32> t{};
  size_t i = 0;
  // The default partition first: GS MADs go out with P_Key index 0.
  for (int pass = 0; pass < 2; ++pass)
    for (const Partition& part : p.partitions) {
      if ((part.pkey == 0x7FFF) != (pass == 0) || !Member(part, node, port) || i >= t.size())
        continue;
      t[i++] = static_cast<uint16_t>(part.pkey | (part.full ? 0x8000 : 0));
    }
  return t;
}

int DataVlsOfCode(int code) {
  switch (code) {
    case 1:
      return 1;
    case 2:
      return 2;
    case 3:
      return 4;
    case 4:
      return 8;
    case 5:
      return 15;
    default:
      return 0;
  }
}

int CodeOfDataVls(int vls) {
  if (vls >= 15) return 5;
  if (vls >= 8) return 4;
  if (vls >= 4) return 3;
  if (vls >= 2) return 2;
  return vls >= 1 ? 1 : 0;
}

Policy DefaultPolicy() {
  Policy p;
  Partition def;
  def.name = "default";
  def.pkey = 0x7FFF;
  def.all = true;
  p.partitions.push_back(def);
  return p;
}

Policy LoadPolicy(const std::string& file) {
  Reader r(file);
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw PolicyError(file + ":0: file: cannot open policy file");
  } catch (const YAML::ParserException& e) {
    throw PolicyError(file + ":" + std::to_string(e.mark.line + 1) + ": syntax: " + e.msg);
  }
  Policy p = DefaultPolicy();
  p.file = file;
  if (root.IsNull()) return p;
  r.OnlyKeys(root, "", {"sm", "routing", "links", "qos", "partitions"});
  if (const YAML::Node sm = root["sm"]) {
    r.OnlyKeys(sm, "sm", {"priority", "sm_key", "subnet_timeout", "sweep"});
    if (sm["priority"])
      p.priority = static_cast<uint8_t>(r.Uint(sm["priority"], "sm.priority", 15));
    if (sm["sm_key"]) p.sm_key = r.Uint(sm["sm_key"], "sm.sm_key", UINT64_MAX);
    if (sm["subnet_timeout"])
      p.subnet_timeout =
          static_cast<uint8_t>(r.Uint(sm["subnet_timeout"], "sm.subnet_timeout", 31));
    if (sm["sweep"]) p.sweep_seconds = static_cast<int>(r.Uint(sm["sweep"], "sm.sweep", 86400));
  }
  if (const YAML::Node rt = root["routing"]) {
    r.OnlyKeys(rt, "routing", {"engine", "fallback"});
    if (rt["engine"]) p.engine = r.Text(rt["engine"], "routing.engine");
    if (rt["fallback"]) p.fallback = r.Text(rt["fallback"], "routing.fallback");
  }
  if (const YAML::Node l = root["links"]) {
    r.OnlyKeys(l, "links", {"max_mtu", "max_data_vls"});
    if (l["max_mtu"]) {
      uint64_t bytes = r.Uint(l["max_mtu"], "links.max_mtu", 4096);
      static const std::pair<uint64_t, uint8_t> kMtus[] = {
          {256, 1}, {512, 2}, {1024, 3}, {2048, 4}, {4096, 5}};
      for (auto [b, code] : kMtus)
        if (b == bytes) p.max_mtu = code;
      if (!p.max_mtu) r.Fail(l["max_mtu"], "links.max_mtu", "one of 256, 512, 1024, 2048, 4096");
    }
    if (l["max_data_vls"]) {
      int v = static_cast<int>(r.Uint(l["max_data_vls"], "links.max_data_vls", 15));
      if (v != 1 && v != 2 && v != 4 && v != 8 && v != 15)
        r.Fail(l["max_data_vls"], "links.max_data_vls", "one of 1, 2, 4, 8, 15");
      p.max_data_vls = v;
    }
  }
  if (const YAML::Node q = root["qos"]) {
    r.OnlyKeys(q, "qos", {"sl2vl", "vlarb"});
    if (const YAML::Node s = q["sl2vl"]) {
      if (!s.IsSequence() || s.size() != 16) r.Fail(s, "qos.sl2vl", "expected 16 VLs, one per SL");
      std::array<uint8_t, 16> t{};
      for (size_t i = 0; i < 16; ++i)
        t[i] = static_cast<uint8_t>(r.Uint(s[i], "qos.sl2vl[" + std::to_string(i) + "]", 15));
      p.sl2vl = t;
    }
    if (const YAML::Node v = q["vlarb"]) {
      r.OnlyKeys(v, "qos.vlarb", {"high_limit", "high", "low"});
      p.vlarb = true;
      if (v["high_limit"])
        p.vl_high_limit =
            static_cast<uint8_t>(r.Uint(v["high_limit"], "qos.vlarb.high_limit", 255));
      if (v["high"]) p.vlarb_high = ReadVlArb(r, v["high"], "qos.vlarb.high");
      if (v["low"]) p.vlarb_low = ReadVlArb(r, v["low"], "qos.vlarb.low");
    }
  }
  if (const YAML::Node parts = root["partitions"]) {
    if (!parts.IsSequence()) r.Fail(parts, "partitions", "expected a list");
    p.partitions.clear();
    std::set<uint16_t> seen;
    for (size_t i = 0; i < parts.size(); ++i) {
      const YAML::Node& e = parts[i];
      std::string f = "partitions[" + std::to_string(i) + "]";
      r.OnlyKeys(e, f, {"name", "pkey", "members", "membership"});
      Partition part;
      part.name = e["name"] ? r.Text(e["name"], f + ".name") : "partition" + std::to_string(i);
      if (!e["pkey"]) r.Fail(e, f + ".pkey", "missing");
      part.pkey = static_cast<uint16_t>(r.Uint(e["pkey"], f + ".pkey", 0x7FFF));
      if (part.pkey == 0) r.Fail(e["pkey"], f + ".pkey", "0 is not a valid P_Key");
      if (!seen.insert(part.pkey).second) r.Fail(e["pkey"], f + ".pkey", "given twice");
      const YAML::Node m = e["members"];
      if (!m || (m.IsScalar() && m.Scalar() == "all")) {
        part.all = true;
      } else if (m.IsSequence()) {
        for (size_t j = 0; j < m.size(); ++j)
          part.members.push_back(r.Text(m[j], f + ".members[" + std::to_string(j) + "]"));
      } else {
        r.Fail(m, f + ".members", "expected 'all' or a list of node names or GUIDs");
      }
      if (e["membership"]) {
        std::string ms = r.Text(e["membership"], f + ".membership");
        if (ms != "full" && ms != "limited")
          r.Fail(e["membership"], f + ".membership", "'full' or 'limited'");
        part.full = ms == "full";
      }
      p.partitions.push_back(part);
    }
    if (p.partitions.size() > 32) r.Fail(parts, "partitions", "at most 32 (one P_Key table block)");
  }
  return p;
}

}  // namespace ibemu::fabricmgr
