// The Congestion Control Agent (IBA annex A10): answers every Congestion Control class (0x21)
// attribute on QP1, with CC_Key checked on every MAD. Settings a Set stores act on the next
// packet, because the data plane reads them from the same CcState.
#pragma once
#include "common/mad/mad_header.h"
#include "emulator/mgmt/managed_device.h"
#include "emulator/mgmt/sma.h"

namespace ibemu::mgmt {

// `in` is the port the MAD arrived on (the CA port whose CCA answers; any port of a switch).
AgentVerdict HandleCongestion(ManagedDevice& d, int in, mad::MadView m);

}  // namespace ibemu::mgmt
