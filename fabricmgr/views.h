// What `ibemu-fabricmgr show` prints, as JSON the daemon sends over its control socket
// (ZeroMQ REQ/REP, one JSON object each way; docs/fabricmgr.md), and the text the CLI makes of it.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fabricmgr/policy.h"
#include "fabricmgr/router.h"
#include "fabricmgr/subnet.h"

namespace ibemu::fabricmgr {

struct SmStatus {
  uint64_t port_guid = 0;
  uint16_t lid = 0;
  uint8_t priority = 0;
  uint32_t act_count = 0;
  std::string engine;
  bool subnet_up = false;
  int heavy_sweeps = 0;
  int light_sweeps = 0;
  std::string policy_file;
  std::string lid_file;
};

// ipc://<run dir>/fabricmgr-<name>.sock, in the private run directory of `ibemu up`
// (common/transport/run_dir.h).
std::string ControlEndpoint(const std::string& name);

nlohmann::json SmJson(const SmStatus& sm);
nlohmann::json NodesJson(const Subnet& s, const std::map<uint64_t, uint16_t>& lids);
nlohmann::json PortsJson(const Subnet& s);
// All switches, or the one named (name, description or GUID); throws std::invalid_argument for
// a name that is no switch.
nlohmann::json RoutesJson(const Subnet& s, const std::map<uint64_t, uint16_t>& lids,
                          const Routes& r, const std::string& only);

// The reply to a request {"show": "nodes"|"ports"|"routes", "switch": "..."}.
nlohmann::json Answer(const nlohmann::json& request, const SmStatus& sm, const Subnet& s,
                      const std::map<uint64_t, uint16_t>& lids, const Routes& r);

// Tables for a terminal.
std::string FormatNodes(const nlohmann::json& reply);
std::string FormatPorts(const nlohmann::json& reply);
std::string FormatRoutes(const nlohmann::json& reply);

}  // namespace ibemu::fabricmgr
