#include "fabricmgr/subnet.h"

#include <cstdio>
#include <sstream>

namespace ibemu::fabricmgr {

std::string GuidString(uint64_t guid) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%016llx", static_cast<unsigned long long>(guid));
  return b;
}

bool ParseGuid(const std::string& text, uint64_t* guid) {
  try {
    size_t used = 0;
    *guid = std::stoull(text, &used, 0);
    return used == text.size();
  } catch (const std::exception&) {
    return false;
  }
}

std::string NodeRecord::name() const {
  std::string n = description.substr(0, description.find(' '));
  return n.empty() ? GuidString(guid) : n;
}

std::vector<int> NodeRecord::EndportNumbers() const {
  if (is_switch()) return {0};
  std::vector<int> v;
  for (int p = 1; p <= num_ports; ++p)
    if (ports[p].linked()) v.push_back(p);
  return v;
}

int Subnet::switches() const {
  int n = 0;
  for (const NodeRecord& r : nodes) n += r.is_switch();
  return n;
}

int Subnet::links() const {
  int n = 0;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const PortRecord& p : nodes[i].ports)
      if (p.linked() && (p.peer_node > static_cast<int>(i) ||
                         (p.peer_node == static_cast<int>(i) && p.peer_port > p.num)))
        ++n;
  return n;
}

std::string Subnet::TopologyKey() const {
  std::map<uint64_t, std::string> lines;
  for (const NodeRecord& r : nodes) {
    std::ostringstream s;
    s << int(r.type) << ' ' << r.num_ports;
    for (const PortRecord& p : r.ports)
      if (p.linked())
        s << ' ' << p.num << '>' << GuidString(nodes[p.peer_node].guid) << ':' << p.peer_port;
    lines[r.guid] = s.str();
  }
  std::string key;
  for (auto& [guid, line] : lines) key += GuidString(guid) + ' ' + line + '\n';
  return key;
}

int Subnet::FindByName(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name() == name || nodes[i].description == name ||
        GuidString(nodes[i].guid) == name)
      return static_cast<int>(i);
  return -1;
}

std::string WidthName(uint8_t w) {
  switch (w) {
    case 1:
      return "1x";
    case 2:
      return "4x";
    case 4:
      return "8x";
    case 8:
      return "12x";
    case 16:
      return "2x";
    default:
      return "?";
  }
}

std::string SpeedName(uint8_t s, uint8_t ext) {
  switch (ext) {
    case 1:
      return "FDR";
    case 2:
      return "EDR";
    case 4:
      return "HDR";
    case 8:
      return "NDR";
    default:
      break;
  }
  switch (s) {
    case 1:
      return "SDR";
    case 2:
      return "DDR";
    case 4:
      return "QDR";
    default:
      return "?";
  }
}

std::string StateName(uint8_t s) {
  static const char* const kNames[] = {"NoChange", "Down", "Init", "Armed", "Active"};
  return s < 5 ? kNames[s] : "?";
}

std::string PhysName(uint8_t s) {
  switch (s) {
    case 1:
      return "Sleep";
    case 2:
      return "Polling";
    case 3:
      return "Disabled";
    case 4:
      return "Training";
    case 5:
      return "LinkUp";
    case 6:
      return "ErrorRecovery";
    case 7:
      return "PhyTest";
    default:
      return "?";
  }
}

}  // namespace ibemu::fabricmgr
