#include "emulator/cc/ib/ca_throttling.h"

#include <algorithm>

#include "common/wire/bth.h"
#include "common/wire/lrh.h"
#include "common/wire/opcode.h"
#include "emulator/cc/ib/cct.h"

namespace ibemu::cc::ib {

Echo CaThrottling::OnReceive(HcaView& h, int port, Packet& p) {
  wire::Bth bth = p.bth();
  if (!bth.fecn()) return Echo::kNone;
  // FECN means nothing on multicast (no single source to slow down).
  if (p.lrh().dlid() >= 0xC000 && p.lrh().dlid() != 0xFFFF) return Echo::kNone;
  return opt_.becn_on_ack && bth.ack_req() ? Echo::kOnAck : Echo::kCnp;
}

CaThrottling::Timer& CaThrottling::TimerOf(int port, int sl) {
  if (timers_.size() <= static_cast<size_t>(port)) timers_.resize(port + 1);
  return timers_[port][sl];
}

uint16_t& CaThrottling::Ccti(HcaView& h, uint32_t qp) {
  int port = h.QpPort(qp);
  if (SlBased(h, port)) {
    if (sl_ccti_.size() <= static_cast<size_t>(port)) sl_ccti_.resize(port + 1, {});
    return sl_ccti_[port][h.QpSl(qp)];
  }
  if (qp_ccti_.size() < h.NumQps()) qp_ccti_.resize(h.NumQps(), 0);
  return qp_ccti_[qp];
}

void CaThrottling::OnResponse(HcaView& h, uint32_t qp, Packet& p) {
  if (!p.bth().becn()) return;
  int port = h.QpPort(qp), sl = h.QpSl(qp);
  mgmt::CcState& cc = h.Cca(port);
  if (!(cc.ca.control_map >> sl & 1)) return;  // the SL's entry is not valid: no CC on it
  const mgmt::CaCongestionEntry& e = cc.ca.sl[sl];
  uint16_t& ccti = Ccti(h, qp);
  uint16_t before = ccti;
  ccti = static_cast<uint16_t>(std::min<int>(ccti + e.ccti_increase, cc.ccti_limit));
  // An event when the CCTI reaches Trigger_Threshold (not on every BECN above it).
  if (e.trigger_threshold != 0 && before < e.trigger_threshold && ccti >= e.trigger_threshold) {
    mgmt::CongestionEvent ev;
    ev.local_qp = h.QpNumber(qp);
    ev.remote_qp = h.QpNumber(qp);  // this emulator's RC QPs have the same number at both ends
    ev.sl = static_cast<uint8_t>(sl);
    ev.service_type = 0;  // RC
    ev.remote_lid = h.QpRemoteLid(qp);
    ev.local_lid = p.lrh().dlid();
    ev.timestamp = static_cast<uint32_t>(h.Now() / mgmt::kPsPerCcTick);
    cc.log.Add(ev, 13);
    cc.log.MarkBit(sl);
  }
  Timer& t = TimerOf(port, sl);
  if (!t.running || opt_.timer_restart_on_becn) StartTimer(h, port, sl);
}

void CaThrottling::StartTimer(HcaView& h, int port, int sl) {
  Timer& t = TimerOf(port, sl);
  uint16_t ticks = h.Cca(port).ca.sl[sl].ccti_timer;
  if (ticks == 0) {  // no timer: CCTI never comes down
    t.running = false;
    return;
  }
  t.running = true;
  ++t.generation;
  h.PostTimer(h.Now() + SimTime{ticks} * mgmt::kPsPerCcTick, static_cast<uint32_t>(port << 4 | sl),
              t.generation);
}

void CaThrottling::OnTimer(HcaView& h, uint32_t a, uint64_t b) {
  int port = static_cast<int>(a >> 4), sl = static_cast<int>(a & 15);
  Timer& t = TimerOf(port, sl);
  if (!t.running || b != t.generation) return;
  t.running = false;
  const mgmt::CcState& cc = h.Cca(port);
  uint16_t min = cc.ca.sl[sl].ccti_min;
  bool above = false;
  // Every CCTI of the SL comes down by one, in QP mode too (A10.3.1).
  auto lower = [&](uint16_t& c) {
    if (c > min) --c;
    above = above || c > min;
  };
  if (SlBased(h, port)) {
    if (static_cast<size_t>(port) < sl_ccti_.size()) lower(sl_ccti_[port][sl]);
  } else {
    for (uint32_t q = 0; q < qp_ccti_.size(); ++q)
      if (h.QpPort(q) == port && h.QpSl(q) == sl) lower(qp_ccti_[q]);
  }
  if (above) StartTimer(h, port, sl);
}

void CaThrottling::OnSent(HcaView& h, uint32_t qp, const Packet& p) {
  int port = h.QpPort(qp);
  const mgmt::CcState& cc = h.Cca(port);
  uint16_t ccti = std::min<uint16_t>(Ccti(h, qp), cc.ccti_limit);
  SimTime base = opt_.cct_base > 0 ? opt_.cct_base : h.SerializationTime(port, h.Mtu());
  SimTime ird = CctDelay(cc.cct[ccti], base);
  if (ird == 0) return;
  // The delay follows the packet: the next one may start once this one is out plus the IRD.
  SimTime next = h.Now() + h.SerializationTime(port, p.wire_bytes()) + ird;
  if (SlBased(h, port))
    h.SetSlGate(port, h.QpSl(qp), next);
  else
    h.SetQpGate(qp, next);
}

}  // namespace ibemu::cc::ib
