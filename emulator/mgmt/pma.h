// The performance management agent (IBA 16.1): ClassPortInfo, PortCounters,
// PortCountersExtended, PortXmitDataSL and PortRcvDataSL from the counters the data plane keeps.
#pragma once
#include "common/mad/mad_header.h"
#include "emulator/mgmt/managed_device.h"
#include "emulator/mgmt/sma.h"

namespace ibemu::mgmt {

AgentVerdict HandlePerf(ManagedDevice& d, int in, mad::MadView m);

}  // namespace ibemu::mgmt
