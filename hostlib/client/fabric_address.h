// Where a host library finds the fabric of `ibemu up` (the environment both host libraries read),
// and how the fabric's description of one node is asked for: the part of attaching that the
// umad and verbs libraries share. What each library attaches to (a port for umad, an HCA for
// verbs) is theirs.
#pragma once
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "common/transport/run_dir.h"
#include "hostlib/client/fabric_link.h"
#include "umad.pb.h"

namespace ibemu::hostclient {

struct FabricAddress {
  transport::RunDir run_dir;       // IBEMU_RUN_DIR, XDG_RUNTIME_DIR/ibemu or /tmp/ibemu-<uid>
  std::string fabric = "default";  // IBEMU_FABRIC
  // How long a Query or Attach may take before the fabric counts as absent
  // (IBEMU_UMAD_QUERY_TIMEOUT_MS).
  std::chrono::milliseconds query_timeout{2000};

  static FabricAddress FromEnv();
  std::string SocketPath() const;  // <run dir>/<fabric>.umad.sock
  std::string Endpoint() const { return "ipc://" + SocketPath(); }
  std::string DirectPath() const;  // <run dir>/<fabric>.umad.direct (FabricLink::Start)
  // " --name <fabric>" for the commands a message suggests, or "" for the default fabric.
  std::string NameOption() const;
};

// IBEMU_UMAD_PORT: "<node>:<port>" with a port number 0..255, or "<node>" alone (the node's best
// port). Node names may themselves contain ':' only before the last one.
struct PortRef {
  std::string node;
  int port = 0;
  bool port_given = false;
};
PortRef ParsePortRef(const std::string& s);

// IBEMU_HCA_MAP: the node of each rank of a parallel job, comma-separated ("H1,H3,H5": rank 0
// stands behind H1, rank 1 behind H3, ...), as `ibemu mpirun` sets it for every rank alike; the
// rank is the launcher's (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID, the first
// set). The node, or "" when the map is unset; when it is set but names no node for this
// process (no rank variable, a rank beyond the map, an empty entry), "" with `why` saying so.
std::string NodeFromRankMap(std::string* why);

// Port `port_num` of a node's description, or null.
const umad::PortAttributes* FindPort(const umad::CaAttributes& ca, int port_num);

// The description of topology node `node`, fresh from the fabric, or nothing with `why` saying
// what is wrong and what to run instead. `start_link` connects `link` (called only when the
// fabric's socket exists); `variable` names the setting that chose the node, for messages.
// After one unanswered Query later ones wait at most 100 ms, so a program facing a dead fabric
// fails in one timeout rather than one per call.
std::optional<umad::CaAttributes> DescribeNode(const FabricAddress& where, const std::string& node,
                                               const std::string& variable, FabricLink& link,
                                               const std::function<bool()>& start_link,
                                               std::string* why);

}  // namespace ibemu::hostclient
