// The CA's management: SMPs for its SMA, GS MADs for its PMA and CCA, and MADs between the
// fabric and a program attached to the port (an SM, tools) through the umad service.

#include "common/mad/mad_header.h"
#include "emulator/hca/hca.h"
#include "emulator/mgmt/cca.h"
#include "emulator/mgmt/pma.h"
#include "emulator/mgmt/sma.h"
#include "emulator/mgmt/smi.h"

namespace ibemu::hca {

void Hca::SendVl15(int p, Packet* pkt) {
  if (!link_up(p)) {
    ++port_mgmt_[p].counters.vl15_dropped;
    FreePacket(pkt);
    return;
  }
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  pstate_[p].vl15.Push(pkt);
  Arbitrate(p);
}

void Hca::SendGmp(int p, Packet* pkt) {
  wire::Lrh lrh = pkt->lrh();
  lrh.set_vl(sl2vl_[p][lrh.sl()]);
  pkt->injected = now();
  QueueControl(p, pkt, lrh.dlid());
}

void Hca::QueueControl(int p, Packet* pkt, uint16_t dlid) {
  pkt->id = NextPacketId();
  pkt->created = now();
  pkt->credit_class = static_cast<uint16_t>(ctx_->CreditClassTo(ports_[p].link.peer_lp, dlid));
  pstate_[p].control.Push(pkt);
  Arbitrate(p);
}

void Hca::SendMad(int p, uint16_t dlid, int sl, int vl, const uint8_t* mad) {
  Packet* pkt = NewPacket();
  mgmt::MadAddress a;
  a.slid = lid(p);
  a.dlid = dlid;
  a.sl = static_cast<uint8_t>(sl);
  a.vl = static_cast<uint8_t>(vl);
  a.src_qp = a.dest_qp = 1;
  a.qkey = mad::kQp1QKey;
  mgmt::BuildMadPacket(pkt, a);
  std::copy(mad, mad + engine::kMadBytes, pkt->mad->data());
  pkt->injected = now();
  QueueControl(p, pkt, dlid);
}

void Hca::RunSma(int p, Packet* pkt, const mgmt::MadAddress& from) {
  mad::MadView m{pkt->mad->data()};
  mgmt::AgentVerdict v = mgmt::HandleSmp(*this, p, m);
  if (v == mgmt::AgentVerdict::kNotMine) {
    DeliverToClient(p, pkt);  // traps, SMInfo and responses are for an SM on this port
    return;
  }
  if (v == mgmt::AgentVerdict::kDrop) {
    FreePacket(pkt);
    return;
  }
  if (m.is_dr()) {
    mgmt::SmiDecision d = mgmt::SmiSend(m, false, p, num_ports());
    if (d.action == mgmt::SmiAction::kForward) return SendVl15(d.port, pkt);
    if (d.action == mgmt::SmiAction::kLocal) {  // the SM asked its own node
      DeliverToClient(p, pkt);
      return;
    }
    FreePacket(pkt);
    return;
  }
  mgmt::MadAddress r;
  r.slid = lid(p);
  r.dlid = from.slid;
  r.vl = policy::kVl15;
  mgmt::BuildMadPacket(pkt, r);
  if (port_mgmt_[p].OwnsLid(r.dlid)) {  // the SM queried its own port by LID
    DeliverToClient(p, pkt);
    return;
  }
  SendVl15(p, pkt);
}

void Hca::RunGsAgents(int p, Packet* pkt, const mgmt::MadAddress& from) {
  if (cc_hooks_ && cc_hooks_->OnMad(*this, p, from.slid, pkt->mad->data())) {
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  // The PMA and the CCA answer here; SA (an SM's), responses and traps go to the attached
  // program. A CC MAD the CCA refuses (a wrong CC_Key) is dropped, not passed on.
  mgmt::AgentVerdict v = mgmt::AgentVerdict::kNotMine;
  if (m.mgmt_class() == mad::mgmt_class::kPerf)
    v = mgmt::HandlePerf(*this, p, m);
  else if (m.mgmt_class() == mad::mgmt_class::kCongestion)
    v = mgmt::HandleCongestion(*this, p, m, from);
  if (v == mgmt::AgentVerdict::kDrop) {
    FreePacket(pkt);
    return;
  }
  if (v != mgmt::AgentVerdict::kRespond && v != mgmt::AgentVerdict::kTrap) {
    DeliverToClient(p, pkt);
    return;
  }
  mgmt::MadAddress r = v == mgmt::AgentVerdict::kTrap ? mgmt::TrapAddress(cc_state(p).trap, lid(p))
                                                      : mgmt::GsResponseAddress(from, lid(p));
  mgmt::BuildMadPacket(pkt, r);
  if (port_mgmt_[p].OwnsLid(r.dlid)) {
    DeliverToClient(p, pkt);
    return;
  }
  SendGmp(p, pkt);
}

void Hca::OnManagementPacket(int p, Packet* pkt) {
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {  // malformed: a receive error (IBA 16.1.3.5)
    ++port_mgmt_[p].counters.rcv_errors;
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  if (a.vl != policy::kVl15) return RunGsAgents(p, pkt, a);
  if (m.mgmt_class() == mad::mgmt_class::kSubnDirected) {
    mgmt::SmiDecision d = mgmt::SmiReceive(m, false, p, num_ports());
    if (d.action != mgmt::SmiAction::kLocal) {  // a CA never relays
      ++port_mgmt_[p].counters.vl15_dropped;
      FreePacket(pkt);
      return;
    }
    if (m.dr_direction()) {  // back at the SM's node
      DeliverToClient(p, pkt);
      return;
    }
    return RunSma(p, pkt, a);
  }
  if (m.mgmt_class() == mad::mgmt_class::kSubnLid &&
      (port_mgmt_[p].OwnsLid(a.dlid) || a.dlid == mad::kPermissiveLid))
    return RunSma(p, pkt, a);
  ++port_mgmt_[p].counters.vl15_dropped;
  FreePacket(pkt);
}

void Hca::OnClientMad(int p, Packet* pkt) {
  // The program filled the MAD and the destination (dlid, dest QP, SL, P_Key); the port
  // supplies its own LID and QP.
  mgmt::MadAddress a;
  if (!mgmt::ParseMadPacket(*pkt, &a)) {
    FreePacket(pkt);
    return;
  }
  mad::MadView m{pkt->mad->data()};
  bool smp = m.mgmt_class() == mad::mgmt_class::kSubnLid || m.is_dr();
  a.slid = lid(p);
  a.src_qp = smp ? 0 : 1;
  if (smp) {
    a.vl = policy::kVl15;
    a.dest_qp = 0;
    a.qkey = 0;
    if (m.is_dr() && m.dr_slid() == mad::kPermissiveLid) a.slid = a.dlid = mad::kPermissiveLid;
  }
  mgmt::BuildMadPacket(pkt, a);
  // A directed route that starts at another node: the LID-routed part first (its LRH goes to
  // that node's LID, and it starts the directed part).
  if (m.is_dr() && m.dr_slid() != mad::kPermissiveLid && !port_mgmt_[p].OwnsLid(a.dlid))
    return SendVl15(p, pkt);
  if (m.is_dr()) {
    mgmt::SmiDecision d = mgmt::SmiSend(m, false, p, num_ports());
    if (d.action == mgmt::SmiAction::kForward) return SendVl15(d.port, pkt);
    if (d.action == mgmt::SmiAction::kLocal) {
      if (m.dr_direction())
        DeliverToClient(p, pkt);
      else
        RunSma(p, pkt, a);
      return;
    }
    FreePacket(pkt);
    return;
  }
  if (port_mgmt_[p].OwnsLid(a.dlid) || (smp && a.dlid == mad::kPermissiveLid)) {
    // Addressed to this port: its own agents answer without touching the link.
    a.slid = lid(p);
    if (smp)
      RunSma(p, pkt, a);
    else
      RunGsAgents(p, pkt, a);
    return;
  }
  if (smp)
    SendVl15(p, pkt);
  else
    SendGmp(p, pkt);
}

}  // namespace ibemu::hca
