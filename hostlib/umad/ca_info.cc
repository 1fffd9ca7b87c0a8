#include "hostlib/umad/ca_info.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ibemu::umad {

namespace {

constexpr uint32_t kStateActive = 4;
constexpr uint32_t kPhysLinkUp = 5;
constexpr uint32_t kPhysDisabled = 3;
constexpr uint32_t kNodeSwitch = 2;

void CopyString(char* dst, size_t size, const std::string& src) {
  std::strncpy(dst, src.c_str(), size - 1);
  dst[size - 1] = '\0';
}

}  // namespace

Config Config::FromEnv() {
  Config c;
  static_cast<hostclient::FabricAddress&>(c) = hostclient::FabricAddress::FromEnv();
  if (const char* v = std::getenv("IBEMU_UMAD_PORT"); v && *v) {
    hostclient::PortRef r = hostclient::ParsePortRef(v);
    c.node = r.node;
    c.port = r.port;
    c.port_given = r.port_given;
  } else {
    std::string why;  // a rank without a node finds no CA, as on a host without one
    c.node = hostclient::NodeFromRankMap(&why);
  }
  return c;
}

int ResolvePort(const CaAttributes& ca, int wanted, const Config& cfg) {
  if (wanted > 0) return FindPort(ca, wanted) ? wanted : -1;
  // Port 0 is a switch's management port; the fabric may leave it out of the port list.
  if (cfg.port_given) return cfg.port == 0 || FindPort(ca, cfg.port) ? cfg.port : -1;
  if (ca.node_type() == kNodeSwitch) return 0;
  int up = -1;
  for (const auto& p : ca.ports()) {
    if (p.state() == kStateActive) return static_cast<int>(p.port());
    if (up < 0 && p.phys_state() == kPhysLinkUp) up = static_cast<int>(p.port());
  }
  if (up >= 0) return up;
  for (const auto& p : ca.ports())
    if (p.phys_state() != kPhysDisabled) return static_cast<int>(p.port());
  return -1;
}

std::string CaName(const CaAttributes& ca) {
  std::string name = ca.ca_name().empty() ? kDefaultCaName : ca.ca_name();
  if (name.size() >= UMAD_CA_NAME_LEN) name.resize(UMAD_CA_NAME_LEN - 1);
  return name;
}

int NumPorts(const CaAttributes& ca) {
  int n = 0;
  for (const auto& p : ca.ports())
    if (p.port() < UMAD_CA_MAX_PORTS && static_cast<int>(p.port()) > n)
      n = static_cast<int>(p.port());
  return n;
}

int FillPort(const std::string& ca_name, const PortAttributes& p, umad_port_t* port) {
  std::memset(port, 0, sizeof *port);
  CopyString(port->ca_name, sizeof port->ca_name, ca_name);
  port->portnum = static_cast<int>(p.port());
  port->base_lid = p.lid();
  port->lmc = p.lmc();
  port->sm_lid = p.sm_lid();
  port->sm_sl = p.sm_sl();
  port->state = p.state();
  port->phys_state = p.phys_state();
  port->rate = p.rate();
  port->capmask = htobe32(p.capmask());
  port->gid_prefix = htobe64(p.gid_prefix());
  port->port_guid = htobe64(p.port_guid());
  // Every IB port has a P_Key table; before an SM writes one it holds the default partition.
  int n = p.pkeys_size() > 0 ? p.pkeys_size() : 1;
  port->pkeys = static_cast<uint16_t*>(std::calloc(n, sizeof(uint16_t)));
  if (!port->pkeys) return -ENOMEM;
  if (p.pkeys_size() == 0) port->pkeys[0] = 0xFFFF;
  for (int i = 0; i < p.pkeys_size(); ++i) port->pkeys[i] = static_cast<uint16_t>(p.pkeys(i));
  port->pkeys_size = static_cast<unsigned>(n);
  CopyString(port->link_layer, sizeof port->link_layer, "InfiniBand");
  return 0;
}

void ReleasePort(umad_port_t* port) {
  std::free(port->pkeys);
  port->pkeys = nullptr;
  port->pkeys_size = 0;
}

int FillCa(const CaAttributes& ca, umad_ca_t* out) {
  std::memset(out, 0, sizeof *out);
  const std::string name = CaName(ca);
  CopyString(out->ca_name, sizeof out->ca_name, name);
  out->node_type = ca.node_type();
  out->numports = NumPorts(ca);
  CopyString(out->fw_ver, sizeof out->fw_ver, ca.fw_ver());
  CopyString(out->ca_type, sizeof out->ca_type, ca.ca_type());
  CopyString(out->hw_ver, sizeof out->hw_ver, ca.hw_rev());
  out->node_guid = htobe64(ca.node_guid());
  out->system_guid = htobe64(ca.system_guid());
  for (const auto& p : ca.ports()) {
    if (p.port() >= UMAD_CA_MAX_PORTS || out->ports[p.port()]) continue;
    auto* port = static_cast<umad_port_t*>(std::calloc(1, sizeof(umad_port_t)));
    if (!port || FillPort(name, p, port) < 0) {
      std::free(port);
      ReleaseCa(out);
      return -ENOMEM;
    }
    out->ports[p.port()] = port;
  }
  return 0;
}

void ReleaseCa(umad_ca_t* ca) {
  for (auto& port : ca->ports) {
    if (!port) continue;
    ReleasePort(port);
    std::free(port);
    port = nullptr;
  }
}

}  // namespace ibemu::umad
