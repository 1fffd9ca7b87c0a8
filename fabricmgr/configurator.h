// Programming a discovered subnet, in the order an SM must (OpenSM's lid, ucast, link
// and QoS managers): PortInfo of every endport (LID, SM LID, LMC 0, SubnetTimeout, and for CA
// ports NeighborMTU and OperVLs agreed with the other end), SwitchInfo (LinearFDBTop, clearing
// PortStateChange) and the LFT blocks of every switch, PortInfo of the switch ports (NeighborMTU,
// OperVLs, VLHighLimit), SL2VL, VLArb and P_Key tables; then every linked port Init -> Armed, and
// only when all are Armed, Armed -> Active. A table is sent only when it differs from what this
// SM last wrote there, so a resweep of an unchanged fabric sends nothing but its checks.
#pragma once
#include <array>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "fabricmgr/mad_port.h"
#include "fabricmgr/policy.h"
#include "fabricmgr/router.h"
#include "fabricmgr/subnet.h"

namespace ibemu::fabricmgr {

struct ConfigStats {
  int port_info = 0;
  int switch_info = 0;
  int lft_blocks = 0;
  int sl2vl = 0;
  int vlarb = 0;
  int pkey = 0;
  int failed = 0;                   // Sets refused or unanswered
  std::vector<std::string> errors;  // the first few, for the log
};

class Configurator {
 public:
  Configurator(SmpClient& smp, const Policy& policy) : smp_(smp), policy_(policy) {}

  // Everything before the port states. `lids`: port GUID -> LID; `sm_lid`: the SM's own LID.
  ConfigStats Program(Subnet& s, const std::map<uint64_t, uint16_t>& lids, const Routes& routes,
                      uint16_t sm_lid);
  // Every linked port in `from` is asked for `to` (Armed, then Active). Returns how many.
  int MovePorts(Subnet& s, uint8_t from, uint8_t to, ConfigStats* stats);
  // Reads the PortInfo of every linked port again; returns how many are not Active.
  int CountNotActive(Subnet& s);

  // Forgets what was written (after the SM lost track of the fabric): next time, all is sent.
  void Forget();

 private:
  void Record(ConfigStats* st, const SmpReply& r, const std::string& what);

  SmpClient& smp_;
  const Policy& policy_;
  // What this SM wrote, by node GUID.
  std::map<uint64_t, std::vector<uint8_t>> lft_;
  std::map<uint64_t, uint16_t> lft_top_;
  std::map<std::tuple<uint64_t, int, int>, std::array<uint8_t, 8>> sl2vl_;
  std::map<std::tuple<uint64_t, int, int>, SmpData> vlarb_;
  std::map<std::pair<uint64_t, int>, SmpData> pkeys_;
};

}  // namespace ibemu::fabricmgr
