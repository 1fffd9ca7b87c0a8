// The switch's management port 0: SMPs by directed route and by LID (the SMA), GS MADs for the
// PMA and the CCA, what port 0 sends into the fabric, and trap 128 to the SM.

#include "common/mad/smp_attributes.h"
#include "emulator/mgmt/cca.h"
#include "emulator/mgmt/pma.h"
#include "emulator/mgmt/sma.h"
#include "emulator/mgmt/smi.h"
#include "emulator/switch/switch.h"

namespace ibemu::sw {

void Switch::DropVl15(int in, Packet* pkt) {
  ++port_mgmt_[in].counters.vl15_dropped;
  FreePacket(pkt);
}

void Switch::ForwardVl15(int out, Packet* pkt) {
  if (out < 1 || out > num_ports() || !link_up(out)) {
    ++port_mgmt_[out < 1 || out > num_ports() ? 0 : out].counters.vl15_dropped;
    FreePacket(pkt);
    return;
  }
  vl15_[out].Push(pkt);
  Arbitrate(out);
}

void Switch::OnManagementPacket(int in, Packet* pkt) {
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {  // malformed: a receive error (IBA 16.1.3.5)
    ++port_mgmt_[in].counters.rcv_errors;
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  if (a.vl == policy::kVl15 && m.mgmt_class() == mad::mgmt_class::kSubnDirected)
    return OnDirectedRoute(in, pkt, m);
  if (a.vl == policy::kVl15) {
    if (m.mgmt_class() != mad::mgmt_class::kSubnLid ||
        mgmt::HandleSmp(*this, in, m) != mgmt::AgentVerdict::kRespond)
      return DropVl15(in, pkt);
    return SendSmpByLid(a.slid, pkt);
  }
  // A GS MAD for the switch: its PMA and its CCA answer; other classes are dropped.
  mgmt::AgentVerdict v = mgmt::AgentVerdict::kNotMine;
  if (a.dest_qp == 1 && m.mgmt_class() == mad::mgmt_class::kPerf)
    v = mgmt::HandlePerf(*this, in, m);
  else if (a.dest_qp == 1 && m.mgmt_class() == mad::mgmt_class::kCongestion)
    v = mgmt::HandleCongestion(*this, in, m, a);
  if (v == mgmt::AgentVerdict::kTrap) {
    mgmt::BuildMadPacket(pkt, mgmt::TrapAddress(cc_state(0).trap, lid()));
    return SendFromPort0(pkt);
  }
  if (v != mgmt::AgentVerdict::kRespond) {
    FreePacket(pkt);
    return;
  }
  mgmt::BuildMadPacket(pkt, mgmt::GsResponseAddress(a, lid()));
  SendFromPort0(pkt);
}

void Switch::OnDirectedRoute(int in, Packet* pkt, mad::MadView m) {
  using mgmt::SmiAction;
  bool lid_part = m.dr_slid() != mad::kPermissiveLid;
  auto directed = [&] {  // the directed part travels with permissive LIDs in the LRH
    mgmt::MadAddress r;
    r.slid = r.dlid = mad::kPermissiveLid;
    r.vl = policy::kVl15;
    mgmt::BuildMadPacket(pkt, r);
  };
  // Back at the node where the directed part started: LID-route it to the requester (C14-13:3),
  // or, pure DR, it was for an SM here (there is none).
  auto returned = [&] {
    if (!lid_part) return DropVl15(in, pkt);
    SendSmpByLid(m.dr_slid(), pkt);
  };
  mgmt::SmiDecision d;
  if (lid_part && !m.dr_direction() && m.hop_ptr() == 0) {
    // The LID-routed part ends here: the directed part starts at this switch.
    d = mgmt::SmiSend(m, true, 0, num_ports());
    if (d.action == SmiAction::kForward) {
      directed();
      return ForwardVl15(d.port, pkt);
    }
  } else {
    d = mgmt::SmiReceive(m, true, in, num_ports());
    if (d.action == SmiAction::kForward) return ForwardVl15(d.port, pkt);
    if (d.action == SmiAction::kLocal && m.dr_direction()) return returned();
  }
  if (d.action == SmiAction::kDrop) return DropVl15(in, pkt);
  if (mgmt::HandleSmp(*this, in, m) != mgmt::AgentVerdict::kRespond) return DropVl15(in, pkt);
  d = mgmt::SmiSend(m, true, 0, num_ports());
  if (d.action == SmiAction::kForward) {
    directed();
    return ForwardVl15(d.port, pkt);
  }
  if (d.action == SmiAction::kLocal) return returned();  // hop count 0
  DropVl15(in, pkt);
}

void Switch::SendFromPort0(Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  int out = LftEntry(lrh.dlid());
  if (out == kNoRoute || out == 0 || out > num_ports() || !port_active(out)) {
    FreePacket(pkt);
    return;
  }
  int vl = Sl2Vl(0, out, lrh.sl());
  if (vl >= ports_[out].data_vls) {
    FreePacket(pkt);
    return;
  }
  lrh.set_vl(static_cast<uint8_t>(vl));
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  pkt->head_arrival = pkt->tail_arrival = now();
  pkt->in_port = 0;
  // The management port is this switch's own input: the class is the queue it takes here.
  pkt->credit_class = static_cast<uint16_t>(ctx_->CreditClassTo(id(), lrh.dlid()));
  // Charge the management port's (internal) buffer, which the crossbar read releases.
  link::Port& p0 = ports_[0];
  p0.rx[p0.Slot(vl, pkt->credit_class)].used += pkt->blocks();
  p0.vl_used[vl] += pkt->blocks();
  Enqueue(0, vl, out, vl, now(), pkt);
}

void Switch::SendTrap128() {
  const mgmt::PortMgmt& p0 = port_mgmt_[0];
  if (p0.sm_lid == 0 || p0.lid == 0) return;
  int out = LftEntry(p0.sm_lid);
  if (out == kNoRoute || out == 0 || out > num_ports() || !link_up(out)) return;
  Packet* pkt = NewPacket();
  pkt->mad = std::make_unique<engine::MadBytes>();
  engine::MadBytes& b = *pkt->mad;
  b.fill(0);
  using namespace mad;
  b[0] = 1;
  b[1] = mgmt_class::kSubnLid;
  b[2] = 1;
  b[3] = method::kTrap;
  Set(b.data(), hdr::kTid, ++trap_tid_);
  Set(b.data(), hdr::kAttrId, attr::kNotice);
  uint8_t* d = b.data() + kSmpDataOffset;
  Set(d, notice::kIsGeneric, 1);
  Set(d, notice::kType, notice::kTypeUrgent);
  Set(d, notice::kProducerType, node_info::kTypeSwitch);
  Set(d, notice::kTrapNumber, notice::kTrapLinkStateChange);
  Set(d, notice::kIssuerLid, p0.lid);
  Set(d, notice::kDataLid, p0.lid);
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  SendSmpByLid(p0.sm_lid, pkt);
}

void Switch::SendSmpByLid(uint16_t dlid, Packet* pkt) {
  mgmt::MadAddress r;
  r.slid = lid();
  r.dlid = dlid;
  r.vl = policy::kVl15;
  mgmt::BuildMadPacket(pkt, r);
  ForwardVl15(LftEntry(dlid), pkt);
}

}  // namespace ibemu::sw
