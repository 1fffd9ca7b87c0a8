#include "emulator/cc/mvcm/mvpm_marking.h"

#include "common/wire/bth.h"

namespace ibemu::cc::mvcm {

void MvpmMarking::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {
  // Data only: ACKs carry the echo, not marks of their own.
  if (p.payload_len == 0) return;
  // The link layer charged the input buffer with the packet at its head's arrival.
  if (s.InputUsedBlocks(in, in_vl) > opt_.th_in * s.VlCapacityBlocks()) p.bth().set_fecn(true);
}

void MvpmMarking::OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) {
  if (p->payload_len == 0) return;
  wire::Bth bth = p->bth();
  if (!bth.fecn()) return;
  uint32_t cap = s.OutputBufferCapacityBlocks();
  // With output buffers the leaving packet is still in its buffer; without, the counts are what
  // it leaves behind, so it is added.
  uint32_t held = cap > 0 ? s.OutputBufferBlocks(out, vl) : s.QueuedBlocks(out, vl) + p->blocks();
  if (cap == 0) cap = s.VlCapacityBlocks();
  if (held > opt_.th_out * cap) bth.set_resv6a(bth.resv6a() | kVbInResv6a);
}

}  // namespace ibemu::cc::mvcm
