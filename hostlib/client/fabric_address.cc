#include "hostlib/client/fabric_address.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace ibemu::hostclient {

FabricAddress FabricAddress::FromEnv() {
  FabricAddress a;
  a.run_dir = transport::ResolveRunDir();
  if (const char* v = std::getenv("IBEMU_FABRIC"); v && *v) a.fabric = v;
  if (const char* v = std::getenv("IBEMU_UMAD_QUERY_TIMEOUT_MS"); v && *v)
    a.query_timeout = std::chrono::milliseconds(std::max(1L, std::atol(v)));
  return a;
}

PortRef ParsePortRef(const std::string& s) {
  PortRef r;
  auto colon = s.rfind(':');
  char* end = nullptr;
  long port = colon == std::string::npos ? 0 : std::strtol(s.c_str() + colon + 1, &end, 10);
  if (colon != std::string::npos && end && *end == '\0' && port >= 0 && port < 256) {
    r.node = s.substr(0, colon);
    r.port = static_cast<int>(port);
    r.port_given = true;
  } else {
    r.node = s;
  }
  return r;
}

std::string NodeFromRankMap(std::string* why) {
  const char* map = std::getenv("IBEMU_HCA_MAP");
  if (!map || !*map) return "";
  const char* rank_var = nullptr;
  const char* rank_text = nullptr;
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* r = std::getenv(v); r && *r) {
      rank_var = v;
      rank_text = r;
      break;
    }
  }
  if (!rank_var) {
    *why =
        "IBEMU_HCA_MAP is set but this process has no rank (none of OMPI_COMM_WORLD_RANK, "
        "PMIX_RANK, PMI_RANK, SLURM_PROCID): run it under mpirun, or name its node with "
        "IBEMU_VERBS_HCA";
    return "";
  }
  char* end = nullptr;
  long rank = std::strtol(rank_text, &end, 10);
  std::vector<std::string> nodes;
  std::string m = map;
  for (size_t at = 0;;) {
    size_t comma = m.find(',', at);
    nodes.push_back(m.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  if (!end || *end || rank < 0) {
    *why = std::string(rank_var) + "='" + rank_text + "' is not a rank";
    return "";
  }
  if (static_cast<size_t>(rank) >= nodes.size() || nodes[rank].empty()) {
    *why = "rank " + std::to_string(rank) + " (" + rank_var + ") has no node in IBEMU_HCA_MAP, " +
           "which names " + std::to_string(nodes.size()) + " for ranks 0.." +
           std::to_string(nodes.size() - 1) + ": start fewer ranks or give more hosts";
    return "";
  }
  return nodes[rank];
}

const umad::PortAttributes* FindPort(const umad::CaAttributes& ca, int port_num) {
  for (const auto& p : ca.ports())
    if (static_cast<int>(p.port()) == port_num) return &p;
  return nullptr;
}

std::string FabricAddress::SocketPath() const {
  return transport::FilesOf(run_dir.path, fabric).umad;
}

std::string FabricAddress::DirectPath() const {
  return transport::FilesOf(run_dir.path, fabric).direct;
}

std::string FabricAddress::NameOption() const {
  return fabric == "default" ? "" : " --name " + fabric;
}

std::optional<umad::CaAttributes> DescribeNode(const FabricAddress& where, const std::string& node,
                                               const std::string& variable, FabricLink& link,
                                               const std::function<bool()>& start_link,
                                               std::string* why) {
  struct stat st;
  if (stat(where.SocketPath().c_str(), &st) != 0) {
    *why = "no fabric named '" + where.fabric + "' is up in run directory " + where.run_dir.path +
           (where.run_dir.source == "default" ? "" : " (from " + where.run_dir.source + ")") +
           " (no " + where.SocketPath() + "). Start one with `ibemu up <topology or scenario>" +
           where.NameOption() + "`, and run the program with `ibemu exec" + where.NameOption() +
           " --hca <node> -- <program>`";
    return std::nullopt;
  }
  if (!start_link()) {
    *why = "cannot connect to " + where.Endpoint();
    return std::nullopt;
  }
  umad::ToFabric msg;
  msg.mutable_query()->set_node(node);
  auto timeout = link.responsive() ? where.query_timeout
                                   : std::min(where.query_timeout, std::chrono::milliseconds(100));
  auto reply = link.Call(msg, timeout);
  if (!reply) {
    // The socket file exists, so either it is going down right now or it was killed and left
    // its files: either way `ibemu up` is the remedy (it removes what a dead fabric left).
    *why = "fabric '" + where.fabric + "' in run directory " + where.run_dir.path +
           " does not answer at " + where.SocketPath() + " within " +
           std::to_string(timeout.count()) + " ms (going down, or killed: `ibemu status" +
           where.NameOption() + "` tells; `ibemu up` starts a new one)";
    return std::nullopt;
  }
  if (!reply->has_described() || !reply->described().ok()) {
    *why = "fabric '" + where.fabric + "' has no node '" + node + "' for " + variable + " (" +
           reply->described().error() + ")";
    return std::nullopt;
  }
  return reply->described().ca();
}

}  // namespace ibemu::hostclient
