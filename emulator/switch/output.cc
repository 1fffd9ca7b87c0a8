// The output port (docs/blocks/output.md): the packet the crossbar read, marked or not by the CC
// mechanism (hook H1, IB CC's FECN marking), onto the link; the link layer charges the credits
// and serialises it (link::Device::Transmit).
#include "emulator/switch/switch.h"

namespace ibemu::sw {

SimTime Switch::SendToOutput(int out, int in, int vl, Packet* pkt, SimTime ready) {
  Output& o = outputs_[out];
  uint32_t bytes = pkt->wire_bytes();
  if (cc_hooks_) cc_hooks_->OnTransmit(*this, in, out, vl, pkt);
  o.starved_vls &= ~(1u << vl);
  SimTime end = Transmit(out, pkt, vl, pkt->credit_class, ready);
  ChargeVl(o, vl, bytes);
  SetStalled(out, vl, false);
  return end;
}

}  // namespace ibemu::sw
