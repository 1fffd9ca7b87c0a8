// Forwarding (docs/blocks/forwarding.md): an arriving packet's output port from the LFT, its
// output VL from the SL2VL table, into the input buffer or dropped; and LFT writes.

#include "emulator/switch/switch.h"

namespace ibemu::sw {

void Switch::Drop(int in, Packet* pkt) {
  ++dropped_;
  ++ports_[in].stats.dropped_no_route;
  Release(in, pkt->lrh().vl(), pkt->credit_class, pkt->blocks());
  FreePacket(pkt);
}

void Switch::OnPacket(int in, Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  uint16_t dlid = lrh.dlid();
  if (lrh.vl() == policy::kVl15) {
    // Directed-route SMPs and SMPs for this switch go to its SMI; other LID-routed SMPs follow
    // the LFT on VL15 (IBA 14.2.2).
    bool dr = pkt->mad && (*pkt->mad)[1] == mad::mgmt_class::kSubnDirected;
    if ((dr && dlid == mad::kPermissiveLid) || port_mgmt_[0].OwnsLid(dlid)) {
      QueueForAgents(in, pkt);
      return;
    }
    int out = LftEntry(dlid);
    if (out == kNoRoute || out == 0 || out == in || out > num_ports()) {
      DropVl15(in, pkt);
      return;
    }
    ForwardVl15(out, pkt);
    return;
  }
  if (port_mgmt_[0].OwnsLid(dlid) && pkt->mad) {
    // A GS MAD (PerfMgt, CC) for the switch: the management port takes it off the buffer.
    Release(in, lrh.vl(), pkt->credit_class, pkt->blocks());
    QueueForAgents(in, pkt);
    return;
  }
  // Partition enforcement, when the SM turned it on for the port (IBA 10.9.3): a data packet
  // whose P_Key the port's table refuses is discarded and counted, coming in or going out.
  if (pkey_enforced_ && port_mgmt_[in].partition_enforcement_inbound &&
      !port_mgmt_[in].AcceptsPKey(pkt->bth().pkey())) {
    ++port_mgmt_[in].counters.rcv_constraint_errors;
    Drop(in, pkt);
    return;
  }
  int out = dlid < lft_.size() ? lft_[dlid] : kNoRoute;
  // No route, a route to the management port, or back out of the input port: IBA 18.2.4.3.2 has
  // the switch discard such packets. So does a port that may not carry data yet.
  if (out == kNoRoute || out == 0 || out == in || out > num_ports() ||
      !ports_[out].link.connected || ports_[in].port_state < 3) {
    ++port_mgmt_[in].counters.rcv_switch_relay_errors;
    Drop(in, pkt);
    return;
  }
  if (!port_active(out)) {
    ++port_mgmt_[out].counters.xmit_discards;
    Drop(in, pkt);
    return;
  }
  if (pkey_enforced_ && port_mgmt_[out].partition_enforcement_outbound &&
      !port_mgmt_[out].AcceptsPKey(pkt->bth().pkey())) {
    ++port_mgmt_[out].counters.xmit_constraint_errors;
    Drop(in, pkt);
    return;
  }
  int in_vl = lrh.vl();
  int out_vl = Sl2Vl(in, out, lrh.sl());
  if (cc_chooses_vls_) out_vl = cc_hooks_->OutputVl(*this, in, out, *pkt, out_vl);
  if (out_vl >= ports_[out].data_vls || in_vl >= cfg_.data_vls) {  // VL15 or unprovisioned VL
    Drop(in, pkt);
    return;
  }
  // The header must be in before the LFT lookup, and the lookup and crossbar setup take the
  // switch latency. Cut-through into a faster output waits until the rest of the packet will
  // arrive before the output needs it, so the output never runs dry mid-packet.
  SimTime routed =
      pkt->head_arrival + ports_[in].link.rate.SerializationTime(pkt->hdr_len) + cfg_.latency;
  SimTime no_underrun =
      pkt->tail_arrival - ports_[out].link.rate.SerializationTime(pkt->wire_bytes());
  Enqueue(in, in_vl, out, out_vl, std::max(routed, no_underrun), pkt);
}

void Switch::PortInfoChanged(int) {
  pkey_enforced_ = false;
  for (const mgmt::PortMgmt& pm : port_mgmt_)
    pkey_enforced_ |= pm.partition_enforcement_inbound || pm.partition_enforcement_outbound;
}

void Switch::SetLftEntry(uint32_t lid, uint8_t port) {
  if (lid >= lft_.size()) {
    if (port == kNoRoute) return;
    lft_.resize(lid + 1, kNoRoute);
  }
  lft_[lid] = port;
}

}  // namespace ibemu::sw
