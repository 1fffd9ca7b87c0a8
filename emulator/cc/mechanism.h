// A congestion-control mechanism: one registered, parameterised factory of the per-device hook
// instances (H8). The scenario's `congestion_control: mechanism:` names it; `ibemu policies` lists
// them. A mechanism reads and checks its parameters when it is made, before anything runs.
#pragma once
#include <memory>
#include <string>

#include "common/policy/params.h"
#include "common/policy/registry.h"
#include "emulator/cc/hca_cc.h"
#include "emulator/cc/side_band.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc {

class Mechanism {
 public:
  virtual ~Mechanism() = default;
  // Null: the mechanism does nothing at switches (or CAs), and the device skips the hooks.
  // `seed` is the device's own, for mechanisms that draw random numbers.
  virtual std::unique_ptr<SwitchCc> ForSwitch(uint64_t seed) const = 0;
  virtual std::unique_ptr<HcaCc> ForHca(uint64_t seed) const = 0;
  // H7: the side band's logic, or null (no side band, the default). With one, SideBandLatency is
  // the time every report and broadcast takes (> 0).
  virtual std::unique_ptr<SideBandCc> ForSideBand() const { return nullptr; }
  virtual SimTime SideBandLatency() const { return 0; }
  // Why the mechanism cannot run on a fabric with this many data VLs per port, or "" if it can:
  // asked when the scenario is loaded, so a run that would drop packets is refused first.
  virtual std::string CheckFabric(int data_vls) const { return ""; }
};

using MechanismRegistry = policy::Registry<Mechanism, const policy::Params&>;

void RegisterMechanisms();

}  // namespace ibemu::cc
