// The Congestion Control Agent (IBA annex A10): answers every Congestion Control class (0x21)
// attribute on QP1, with CC_Key checked on every MAD. Settings a Set stores act on the next
// packet, because the data plane reads them from the same CcState.
#pragma once
#include "common/mad/mad_header.h"
#include "emulator/mgmt/mad_packet.h"
#include "emulator/mgmt/managed_device.h"
#include "emulator/mgmt/sma.h"

namespace ibemu::mgmt {

// `in` is the port the MAD arrived on (the CA port whose CCA answers; any port of a switch),
// `from` the requester. A MAD refused for its CC_Key becomes the Bad CC_Key trap (kTrap) when a
// manager has set the class's TrapLID; TrapAddress gives where it goes.
AgentVerdict HandleCongestion(ManagedDevice& d, int in, mad::MadView m, const MadAddress& from);
MadAddress TrapAddress(const CcTrapTarget& t, uint16_t own_lid);

}  // namespace ibemu::mgmt
