// The output buffer of a CIOQ switch (docs/blocks/output_buffer.md), used when
// SwitchConfig::output_buffer_blocks > 0: the crossbar moves packets from the input buffers into
// a buffer per output port and VL at the crossbar rate, while that buffer has room for the
// whole packet; the link sends from it, VL arbitration choosing among the VLs whose head has the
// peer's credits. With a speedup above 1 packets pile up in the output buffers first and reach
// the inputs only once an output buffer is full: the switch Ferrer et al.'s MVCM marks.
#include "emulator/switch/switch.h"

namespace ibemu::sw {

void Switch::ArbitrateCioq(int out) {
  if (!link_up(out)) return;
  SendFromOutputBuffer(out);
  TransferToOutputBuffer(out);
}

void Switch::SendFromOutputBuffer(int out) {
  if (LinkTaken(out)) return;
  link::Port& pt = ports_[out];
  Output& o = outputs_[out];
  uint32_t eligible = 0;
  SimTime next_ready = INT64_MAX;
  int classes = pt.classes;
  std::array<int, policy::kMaxVls> slot_of{};  // per VL, the class queue whose head may go
  for (int vl = 0; vl < pt.data_vls; ++vl) {
    bool waiting = false, fits = false;
    int first = classes == 1 ? 0 : static_cast<int>(o.next_class[vl]);
    for (int k = 0; k < classes && !fits; ++k) {
      int slot = pt.Slot(vl, (first + k) % classes);
      const Packet* h = o.obuf[slot].head;
      if (!h) continue;
      if (h->ready_at > now()) {
        next_ready = std::min(next_ready, h->ready_at);
        continue;
      }
      waiting = true;
      fits = pt.tx[pt.Slot(vl, h->credit_class)].Fits(h->blocks());
      slot_of[vl] = slot;
    }
    if (!waiting) continue;
    if (fits)
      eligible |= 1u << vl;
    else
      o.starved_vls |= 1u << vl;
    SetStalled(out, vl, !fits);
  }
  int vl = eligible ? ChooseVl(o, eligible) : -1;
  if (vl < 0) {
    if (next_ready != INT64_MAX) WakeAt(out, next_ready);
    return;
  }
  int slot = slot_of[vl];
  if (classes > 1) o.next_class[vl] = static_cast<uint32_t>((slot % classes + 1) % classes);
  Packet* pkt = o.obuf[slot].Pop();
  uint32_t blocks = pkt->blocks();
  // Cut-through from the output buffer: the head leaves now, the tail once the crossbar has
  // written it (tail_arrival, set by the transfer).
  SimTime end = SendToOutput(out, pkt->in_port, vl, pkt, pkt->tail_arrival);
  // The buffer holds the packet until its tail has left; its release looks at both stages.
  Post(id(), end, kOutputRelease, static_cast<uint16_t>(out), static_cast<uint32_t>(slot), blocks);
}

void Switch::TransferToOutputBuffer(int out) {
  Output& o = outputs_[out];
  int vls = ports_[out].data_vls;
  if (!Requested(out)) return;
  if (o.write_free_at > now()) {
    WakeAt(out, o.write_free_at);
    return;
  }
  // The crossbar serves the output's VLs in turn; within a VL its input arbiter picks.
  int n = num_ports() + 1;
  int vl = -1, in = -1;
  for (int k = 0; k < vls && in < 0; ++k) {
    vl = (o.next_transfer_vl + k) % vls;
    if (o.per_vl[vl].pending == 0) continue;
    const uint64_t* mask = ReqMask(out, vl);
    auto servable = [&](int i) {
      return (mask[i / 64] >> (i % 64) & 1) && Servable(out, vl, i) != nullptr;
    };
    in = o.xbar->Pick(vl, n, mask, servable);
  }
  if (in < 0) return;  // the inputs' releases and the buffer's wake the output again
  o.next_transfer_vl = (vl + 1) % vls;
  Queue* q = Servable(out, vl, in);
  TakeRequest(out, vl, in, q);
  // Counted in the output buffer before it leaves the input, so that CC never sees it in neither.
  o.per_vl[vl].obuf_blocks += q->q.head->blocks();
  const link::Port& pt = ports_[out];
  int slot = pt.Slot(vl, q->q.head->out_class);
  if (pt.classes > 1) o.obuf_class_blocks[slot] += q->q.head->blocks();
  SimTime read_end;
  Packet* pkt = ReadFromInput(out, vl, in, q, &read_end);
  o.write_free_at = read_end;
  pkt->ready_at = now();
  pkt->tail_arrival = std::max(pkt->tail_arrival, read_end);
  o.obuf[slot].Push(pkt);
  SendFromOutputBuffer(out);
  if (Requested(out)) WakeAt(out, read_end);
  if (!q->q.empty()) HeadChanged(q);
}

void Switch::DiscardOutputBuffer(int out) {
  Output& o = outputs_[out];
  int classes = ports_[out].classes;
  for (size_t slot = 0; slot < o.obuf.size(); ++slot) {
    while (!o.obuf[slot].empty()) {
      Packet* pkt = o.obuf[slot].Pop();
      o.per_vl[slot / classes].obuf_blocks -= pkt->blocks();
      if (classes > 1) o.obuf_class_blocks[slot] -= pkt->blocks();
      ++port_mgmt_[out].counters.xmit_discards;
      ++dropped_;
      FreePacket(pkt);
    }
  }
}

}  // namespace ibemu::sw
