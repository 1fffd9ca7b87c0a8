// The daemon: the master SM's sweeps. A heavy sweep discovers the whole fabric,
// assigns LIDs, routes, programs and activates it; a light sweep, every --sweep seconds, only
// asks every switch for SwitchInfo (PortStateChange) and every CA port for its PortInfo, and
// turns into a heavy sweep when something moved. Traps 128 and 144 are answered with
// TrapRepress and trigger a heavy sweep. SMInfo Gets from other nodes are answered (MASTER).
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include "fabricmgr/configurator.h"
#include "fabricmgr/lid_manager.h"
#include "fabricmgr/mad_port.h"
#include "fabricmgr/policy.h"
#include "fabricmgr/router.h"
#include "fabricmgr/subnet.h"
#include "fabricmgr/views.h"

namespace ibemu::fabricmgr {

struct RunOptions {
  uint64_t port_guid = 0;
  std::string policy_file;
  std::string state_dir;
  int sweep_seconds = 10;  // 0: no light sweeps (traps still resweep)
  std::string name;        // control socket name
};

class SubnetManager {
 public:
  SubnetManager(MadPort& port, const Policy& policy, const std::string& state_dir);

  // One heavy sweep; true when the subnet is up (every linked port Active, nothing refused).
  bool HeavySweep(const std::string& why);
  // One light sweep; true when something changed (the caller then sweeps heavy).
  bool LightSweep(std::string* what);
  // Waits up to timeout_ms for unsolicited MADs and handles them.
  void Poll(int timeout_ms) { smp_.Poll(timeout_ms); }

  bool sweep_requested() const { return sweep_requested_; }
  const std::string& sweep_reason() const { return sweep_reason_; }
  nlohmann::json Answer(const nlohmann::json& request) const;

 private:
  void OnUnsolicited(const ReceivedMad& m);
  void Request(const std::string& why) {
    if (!sweep_requested_) sweep_reason_ = why;
    sweep_requested_ = true;
  }

  MadPort& port_;
  const Policy& policy_;
  SmpClient smp_;
  LidManager lids_;
  Configurator config_;
  Subnet subnet_;
  std::map<uint64_t, uint16_t> assigned_;
  Routes routes_;
  SmStatus status_;
  bool sweep_requested_ = false;
  std::string sweep_reason_;
};

// `ibemu-fabricmgr run`: the daemon until SIGINT or SIGTERM. Returns the exit status.
int RunDaemon(const RunOptions& o);
// `ibemu-fabricmgr show ...`: asks the daemon, prints; returns the exit status.
int Show(const std::string& name, const std::string& what, const std::string& sw, bool json,
         int timeout_ms);

}  // namespace ibemu::fabricmgr
