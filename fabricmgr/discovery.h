// Directed-route discovery (IBA 14.2.2, the way OpenSM's first sweep goes): from the SM's own
// node, level by level, NodeInfo through every port whose link is up, then NodeDescription,
// SwitchInfo and the PortInfo of every port of each node found. Each level's SMPs are in flight
// together, so a fabric costs about two round trips per hop of its diameter.
#pragma once
#include "fabricmgr/mad_port.h"
#include "fabricmgr/subnet.h"

namespace ibemu::fabricmgr {

class Discovery {
 public:
  explicit Discovery(SmpClient& smp) : smp_(smp) {}
  // Throws std::runtime_error when the SM's own node does not answer.
  Subnet Run();
  int unanswered() const { return unanswered_; }  // SMPs that timed out or failed

 private:
  SmpClient& smp_;
  int unanswered_ = 0;
};

// The SMPs a sweep sends, kept in one place.
Smp NodeInfoGet(const std::vector<uint8_t>& path);
Smp PortInfoGet(const std::vector<uint8_t>& path, int port);
Smp SwitchInfoGet(const std::vector<uint8_t>& path);
Smp NodeDescriptionGet(const std::vector<uint8_t>& path);

}  // namespace ibemu::fabricmgr
