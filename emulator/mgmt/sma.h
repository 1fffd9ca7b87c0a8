// The subnet management agent (IBA 14.2.5): answers Get and Set of the SMP attributes on a
// device through the ManagedDevice interface. Sets take effect in the data plane at once.
#pragma once
#include <optional>

#include "common/mad/mad_header.h"
#include "emulator/mgmt/mad_packet.h"
#include "emulator/mgmt/managed_device.h"

namespace ibemu::mgmt {

enum class AgentVerdict {
  kRespond,  // the MAD now holds the response
  kDrop,     // silently discarded (M_Key violation, a response or repress, malformed)
  kNotMine,  // not for the agent (SMInfo, traps): an SM on this port may take it
  kTrap,     // the MAD now holds a trap (Notice) for the address the agent keeps (a CCA's)
};

// `in` is the port the SMP arrived on (0 on a switch for its management port).
AgentVerdict HandleSmp(ManagedDevice& d, int in, mad::MadView m);

// Turns a request into its response: GetResp, status, D bit on directed-route SMPs.
void MakeResponse(mad::MadView m, uint16_t status);

// The checks every agent makes first (IBA 13.4.7): not a request for an agent (a response or
// repress) -> kNotMine; a version or method it does not take -> kRespond with the status. Empty
// when the agent should go on.
std::optional<AgentVerdict> CheckRequest(mad::MadView m, uint8_t class_version);

// A GS MAD from QP1 of `lid` (an agent's response or trap) to `dlid`'s `dest_qp`.
mgmt::MadAddress FromQp1(uint16_t lid, uint16_t dlid, uint32_t dest_qp, uint8_t sl, uint32_t qkey,
                         uint16_t pkey);
// Where an agent's GS response goes: back to the requester's LID and QP, from QP1 of `lid`.
mgmt::MadAddress GsResponseAddress(const mgmt::MadAddress& request, uint16_t lid);

// The arbiter configuration a port's VLArbitrationTable and VLHighLimit describe.
policy::VlArbConfig VlArbConfigOf(const PortMgmt& pm, const policy::VlArbConfig& base,
                                  int data_vls);

}  // namespace ibemu::mgmt
