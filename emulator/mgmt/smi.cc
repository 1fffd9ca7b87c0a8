#include "emulator/mgmt/smi.h"

namespace ibemu::mgmt {
namespace {

SmiDecision Drop() {
  return {SmiAction::kDrop, 0};
}
SmiDecision Local() {
  return {SmiAction::kLocal, 0};
}
SmiDecision Out(int port, int num_ports) {
  // Port 0 is the node itself, not a way out; beyond the last port does not exist.
  if (port < 1 || port > num_ports) return Drop();
  return {SmiAction::kForward, port};
}

// The directed part may be reached by a LID-routed part (DrSLID is then the requester's LID, and
// the node where the directed part starts routes the response back to it); a LID-routed part
// after the directed one (DrDLID not permissive) is not supported.
bool Supported(mad::MadView m) {
  return m.dr_dlid() == mad::kPermissiveLid;
}

}  // namespace

SmiDecision SmiReceive(mad::MadView m, bool is_switch, int in, int num_ports) {
  int ptr = m.hop_ptr(), cnt = m.hop_cnt();
  if (cnt > mad::kMaxDrHops || !Supported(m)) return Drop();
  if (!m.dr_direction()) {
    // Outgoing (C14-9).
    if (cnt != 0 && ptr == 0) return Drop();  // the sender should have advanced it
    if (ptr > 0 && ptr < cnt) {               // an intermediate hop: only switches relay
      if (!is_switch) return Drop();
      m.set_return_path(ptr, static_cast<uint8_t>(in));
      m.set_hop_ptr(static_cast<uint8_t>(ptr + 1));
      return Out(m.initial_path(ptr + 1), num_ports);
    }
    if (ptr == cnt) {  // the end of the path: this node's SMA answers
      if (cnt != 0) m.set_return_path(ptr, static_cast<uint8_t>(in));
      m.set_hop_ptr(static_cast<uint8_t>(ptr + 1));
      return Local();
    }
    return ptr == cnt + 1 ? Local() : Drop();
  }
  // Returning (C14-13).
  if (cnt != 0 && ptr == cnt + 1) return Drop();
  if (ptr >= 2 && ptr <= cnt) {
    if (!is_switch) return Drop();
    m.set_hop_ptr(static_cast<uint8_t>(ptr - 1));
    return Out(m.return_path(ptr - 1), num_ports);
  }
  if (ptr == 1) {  // back at the SM's node
    m.set_hop_ptr(0);
    return Local();
  }
  return ptr == 0 ? Local() : Drop();
}

SmiDecision SmiSend(mad::MadView m, bool is_switch, int from, int num_ports) {
  int ptr = m.hop_ptr(), cnt = m.hop_cnt();
  if (cnt > mad::kMaxDrHops || !Supported(m)) return Drop();
  if (!m.dr_direction()) {
    if (ptr != 0) return Drop();  // an SM starts every path at hop 0
    m.set_hop_ptr(1);
    if (cnt == 0) return Local();  // addressed to the SM's own node
    // The first hop leaves from the port the SM sends on; on a CA that is the only choice.
    int out = m.initial_path(1);
    if (!is_switch && out != from) return Drop();
    return Out(out, num_ports);
  }
  // An agent's response starts where the request ended.
  if (cnt == 0 && ptr == 1) {
    m.set_hop_ptr(0);
    return Local();
  }
  if (cnt != 0 && ptr == cnt + 1) {
    m.set_hop_ptr(static_cast<uint8_t>(cnt));
    return Out(m.return_path(cnt), num_ports);
  }
  return Drop();
}

}  // namespace ibemu::mgmt
