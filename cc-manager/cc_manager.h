// The manager's work, apart from timers and sockets (daemon.cc): find every Congestion Control
// Agent (a switch's, and one per CA port) by directed-route discovery, program it from the policy
// with CC MADs and verify it with Gets, program CCAs that appear later, read the CongestionLogs
// into events and per-port marking rates, and answer the CLI's requests.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cc-manager/cc_mads.h"
#include "cc-manager/cca.h"
#include "cc-manager/congestion_record.h"
#include "cc-manager/policy.h"
#include "ccmgr.pb.h"
#include "fabricmgr/mad_port.h"

namespace ibemu::ccmgr {

// The names the manager's files use for the MADs they send.
using fabricmgr::MadReply;
using fabricmgr::MadRequest;
namespace attr = mad::attr;
namespace method = mad::method;

// The agents the manager registers: directed-route SMPs for discovery, LID-routed SMPs for the
// switches' forwarding tables (which port a logged packet left by), and the CC class.
std::vector<fabricmgr::MadAgent> CcManagerAgents();

class CcManager {
 public:
  using Logger = std::function<void(const std::string&)>;
  CcManager(fabricmgr::SmpClient& client, CcPolicy policy, CongestionRecord& record, Logger log);

  // Discovers the fabric, then programs every CCA that is new, moved, or not yet verified.
  // Returns false when the manager's own port does not answer.
  bool Sweep();
  // One Get of every CCA's CongestionLog.
  void PollLogs();
  Reply Handle(const Request& q);
  // A MAD that is no answer to the manager's: a CCA's Bad CC_Key trap is repressed and logged.
  void OnUnsolicited(const fabricmgr::ReceivedMad& m);
  Status MakeStatus() const;
  const CcPolicy& policy() const { return policy_; }
  void set_port_description(std::string d) { port_description_ = std::move(d); }
  const std::map<std::pair<uint64_t, int>, Cca>& ccas() const { return ccas_; }

 private:
  bool Program(Cca& c);
  void ReadKeys();
  bool ReadBack(const Cca& c, NodeState* out, std::string* error);
  NodeState Describe(const Cca& c) const;
  std::vector<Cca*> Match(const std::string& node, int port, std::string* error);
  int PortOf(const Cca& sw, uint16_t dlid);
  std::vector<fabricmgr::MadReply> Run(std::vector<fabricmgr::MadRequest> q) {
    return client_.Transact(std::move(q));
  }
  fabricmgr::MadRequest Cc(const Cca& c, uint8_t method, uint16_t attr, uint32_t mod) const {
    return {BuildCcMad(method, attr, mod, policy_.cc_key), c.lid};
  }

  fabricmgr::SmpClient& client_;
  CcPolicy policy_;
  CongestionRecord& record_;
  Logger log_;
  std::map<std::pair<uint64_t, int>, Cca> ccas_;  // (node GUID, port)
  // Switch LFT blocks read so far (switch GUID -> block -> the 64 output ports); a sweep forgets
  // them, since routes may have changed.
  std::map<uint64_t, std::map<int, std::array<uint8_t, 64>>> lft_;
  uint64_t sweeps_ = 0;
  uint64_t key_violations_ = 0;
  uint64_t traps_ = 0;
  uint16_t own_lid_ = 0;
  std::string port_description_;  // "mlx5_0 port 1", for status  // where the CCAs send their traps
                                  // (the manager's port, from discovery)
};

}  // namespace ibemu::ccmgr
