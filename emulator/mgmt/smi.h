// The subnet management interface's directed-route rules (IBA 14.2.2.2-14.2.2.4): what a node
// does with a directed-route SMP it receives or sends, and the hop pointer and return path
// updates that go with it. Pure functions of the SMP bytes, so they are tested on their own.
//
// The pure directed-route form (DrSLID and DrDLID both permissive, what OpenSM and most diags
// send) and a LID-routed part before the directed one (DrSLID = the requester's LID, as
// ibportstate sends) are routed; the node where the directed part starts handles the LID-routed
// legs (Switch::OnManagementPacket). A LID-routed part after it (DrDLID not permissive) is
// dropped; see docs/management.md.
#pragma once
#include "common/mad/mad_header.h"

namespace ibemu::mgmt {

enum class SmiAction {
  kDrop,     // the spec's "discard": no response
  kLocal,    // give it to this node's SMA (outgoing) or its SM (returning)
  kForward,  // send it out of `port`
};

struct SmiDecision {
  SmiAction action = SmiAction::kDrop;
  int port = 0;
};

// A DR SMP arrived on `in` of a node with `num_ports` ports. Updates HopPointer and ReturnPath.
SmiDecision SmiReceive(mad::MadView m, bool is_switch, int in, int num_ports);
// This node sends a DR SMP: the SM's request (from port `from`, the port it is attached to; a
// switch passes 0) or an agent's response. Updates HopPointer.
SmiDecision SmiSend(mad::MadView m, bool is_switch, int from, int num_ports);

}  // namespace ibemu::mgmt
