#include "fabricmgr/views.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "common/transport/run_dir.h"

namespace ibemu::fabricmgr {
namespace {

using nlohmann::json;
using namespace mad;

uint16_t LidOf(const std::map<uint64_t, uint16_t>& lids, const PortRecord& p) {
  auto it = lids.find(p.guid);
  return it == lids.end() ? p.lid() : it->second;
}

std::string PathText(const std::vector<uint8_t>& path) {
  std::string t = "0";
  for (uint8_t p : path) t += "," + std::to_string(p);
  return t;
}

std::string Pad(std::string s, size_t w, bool right = false) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

}  // namespace

std::string ControlEndpoint(const std::string& name) {
  return "ipc://" + transport::ResolveRunDir().path + "/fabricmgr-" + name + ".sock";
}

json SmJson(const SmStatus& sm) {
  return {{"guid", GuidString(sm.port_guid)}, {"lid", sm.lid},
          {"priority", sm.priority},          {"state", "MASTER"},
          {"act_count", sm.act_count},        {"engine", sm.engine},
          {"subnet_up", sm.subnet_up},        {"heavy_sweeps", sm.heavy_sweeps},
          {"light_sweeps", sm.light_sweeps},  {"policy", sm.policy_file},
          {"lid_file", sm.lid_file}};
}

json NodesJson(const Subnet& s, const std::map<uint64_t, uint16_t>& lids) {
  json a = json::array();
  for (const NodeRecord& n : s.nodes) {
    json lid_list = json::array();
    for (int p : n.EndportNumbers()) lid_list.push_back(LidOf(lids, n.ports[p]));
    a.push_back({{"name", n.name()},
                 {"description", n.description},
                 {"guid", GuidString(n.guid)},
                 {"type", n.is_switch() ? "Switch" : "CA"},
                 {"ports", n.num_ports},
                 {"lids", lid_list},
                 {"path", PathText(n.path)}});
  }
  return a;
}

json PortsJson(const Subnet& s) {
  json a = json::array();
  for (const NodeRecord& n : s.nodes)
    for (const PortRecord& p : n.ports) {
      if (!p.known || (p.num == 0 && !n.is_switch()) || (p.num > 0 && !p.linked())) continue;
      json j = {{"node", n.name()},
                {"port", p.num},
                {"guid", GuidString(p.guid)},
                {"lid", p.lid()},
                {"sm_lid", p.Field(port_info::kMasterSmLid)},
                {"state", StateName(p.state())},
                {"phys", PhysName(p.phys())},
                {"width", WidthName(static_cast<uint8_t>(p.Field(port_info::kLinkWidthActive)))},
                {"speed", SpeedName(static_cast<uint8_t>(p.Field(port_info::kLinkSpeedActive)),
                                    static_cast<uint8_t>(p.Field(port_info::kLinkSpeedExtActive)))},
                {"mtu", 128 << p.Field(port_info::kNeighborMtu)},
                {"oper_vls", DataVlsOfCode(static_cast<int>(p.Field(port_info::kOperationalVls)))}};
      if (p.num == 0) {
        j["width"] = "";
        j["speed"] = "";
        j["mtu"] = 0;
      }
      j["peer"] = p.linked() ? s.nodes[p.peer_node].name() + "[" + std::to_string(p.peer_port) + "]"
                             : std::string();
      a.push_back(j);
    }
  return a;
}

json RoutesJson(const Subnet& s, const std::map<uint64_t, uint16_t>& lids, const Routes& r,
                const std::string& only) {
  // Who owns each LID, to name the destinations.
  std::map<uint16_t, std::string> dest;
  for (const NodeRecord& n : s.nodes)
    for (int p : n.EndportNumbers())
      if (uint16_t l = LidOf(lids, n.ports[p]))
        dest[l] = n.is_switch() ? n.name() : n.name() + "[" + std::to_string(p) + "]";
  json a = json::array();
  bool found = false;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeRecord& n = s.nodes[i];
    if (!n.is_switch()) continue;
    if (!only.empty() && only != n.name() && only != n.description && only != GuidString(n.guid))
      continue;
    found = true;
    json entries = json::array();
    auto lft = r.result.lft.find(static_cast<int>(i));
    auto sl = r.result.path_sl.find(static_cast<int>(i));
    if (lft != r.result.lft.end())
      for (size_t lid = 1; lid < lft->second.size() && lid <= r.top_lid; ++lid) {
        if (lft->second[lid] == routing::kNoPort) continue;
        json e = {
            {"lid", lid}, {"port", lft->second[lid]}, {"dest", dest[static_cast<uint16_t>(lid)]}};
        if (sl != r.result.path_sl.end() && lid < sl->second.size()) e["sl"] = sl->second[lid];
        entries.push_back(e);
      }
    a.push_back({{"switch", n.name()},
                 {"guid", GuidString(n.guid)},
                 {"lid", LidOf(lids, n.ports[0])},
                 {"top", Get(n.switch_info.data(), switch_info::kLinearFdbTop)},
                 {"entries", entries}});
  }
  if (!only.empty() && !found) throw std::invalid_argument("no switch named '" + only + "'");
  return a;
}

json Answer(const json& request, const SmStatus& sm, const Subnet& s,
            const std::map<uint64_t, uint16_t>& lids, const Routes& r) {
  try {
    std::string what = request.value("show", "");
    json reply = {{"ok", true}, {"sm", SmJson(sm)}};
    if (what == "nodes")
      reply["nodes"] = NodesJson(s, lids);
    else if (what == "ports")
      reply["ports"] = PortsJson(s);
    else if (what == "routes")
      reply["routes"] = RoutesJson(s, lids, r, request.value("switch", ""));
    else if (what != "sm")
      throw std::invalid_argument("unknown request '" + what + "' (nodes, ports, routes, sm)");
    return reply;
  } catch (const std::exception& e) {
    return {{"ok", false}, {"error", e.what()}};
  }
}

std::string FormatNodes(const json& reply) {
  std::ostringstream o;
  const json& sm = reply["sm"];
  o << "SM " << sm["guid"].get<std::string>() << " LID " << sm["lid"] << " priority "
    << sm["priority"] << " " << sm["state"].get<std::string>() << "; engine "
    << sm["engine"].get<std::string>() << "; subnet "
    << (sm["subnet_up"].get<bool>() ? "up" : "not up") << "\n";
  o << Pad("type", 7) << Pad("guid", 20) << Pad("lids", 10) << Pad("ports", 6) << "description\n";
  for (const json& n : reply["nodes"]) {
    std::string lids;
    for (const json& l : n["lids"])
      lids += (lids.empty() ? "" : ",") + std::to_string(l.get<int>());
    o << Pad(n["type"].get<std::string>(), 7) << Pad(n["guid"].get<std::string>(), 20)
      << Pad(lids.empty() ? "-" : lids, 10) << Pad(std::to_string(n["ports"].get<int>()), 6)
      << n["description"].get<std::string>() << "\n";
  }
  return o.str();
}

std::string FormatPorts(const json& reply) {
  std::ostringstream o;
  o << Pad("node", 10) << Pad("port", 5) << Pad("lid", 6) << Pad("state", 8) << Pad("phys", 10)
    << Pad("width", 6) << Pad("speed", 6) << Pad("mtu", 6) << Pad("vls", 4) << "peer\n";
  for (const json& p : reply["ports"]) {
    int mtu = p["mtu"].get<int>();
    o << Pad(p["node"].get<std::string>(), 10) << Pad(std::to_string(p["port"].get<int>()), 5)
      << Pad(std::to_string(p["lid"].get<int>()), 6) << Pad(p["state"].get<std::string>(), 8)
      << Pad(p["phys"].get<std::string>(), 10) << Pad(p["width"].get<std::string>(), 6)
      << Pad(p["speed"].get<std::string>(), 6) << Pad(mtu ? std::to_string(mtu) : "", 6)
      << Pad(std::to_string(p["oper_vls"].get<int>()), 4) << p["peer"].get<std::string>() << "\n";
  }
  return o.str();
}

std::string FormatRoutes(const json& reply) {
  std::ostringstream o;
  for (const json& sw : reply["routes"]) {
    o << "Switch " << sw["switch"].get<std::string>() << " " << sw["guid"].get<std::string>()
      << " LID " << sw["lid"] << ": LinearFDBTop " << sw["top"] << "\n";
    bool sl = !sw["entries"].empty() && sw["entries"][0].contains("sl");
    o << "  " << Pad("LID", 7, true) << Pad("port", 6, true) << (sl ? Pad("SL", 4, true) : "")
      << "  destination\n";
    for (const json& e : sw["entries"]) {
      o << "  " << Pad(std::to_string(e["lid"].get<int>()), 7, true)
        << Pad(std::to_string(e["port"].get<int>()), 6, true)
        << (sl ? Pad(std::to_string(e.value("sl", 0)), 4, true) : "") << "  "
        << e["dest"].get<std::string>() << "\n";
    }
  }
  return o.str();
}

}  // namespace ibemu::fabricmgr
