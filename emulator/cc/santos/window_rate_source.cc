#include "emulator/cc/santos/window_rate_source.h"

#include <algorithm>
#include <cmath>

#include "common/wire/bth.h"
#include "common/wire/lrh.h"
#include "common/wire/opcode.h"
#include "emulator/cc/rc_window.h"

namespace ibemu::cc::santos {
WindowRateSource::WindowRateSource(const Options& o) : opt_(o) {
  if (o.rate != "none") rate_ = MakeRateFunction(o.rate, o.r_min, o.m);
}

WindowRateSource::Qp& WindowRateSource::Of(uint32_t qp) {
  if (qps_.size() <= qp) qps_.resize(qp + 1);
  return qps_[qp];
}

double WindowRateSource::Ipd(double rate) const {
  double ipd = 1 / rate - 1;
  // Discrete: the hardware's 256 rates R_max / (1 + ipd); the rate itself stays exact, so
  // LIPD's fractional increase steps accumulate instead of rounding away
  // (../shared/notes/mvcm_santos.md B.6.7).
  return opt_.discrete ? std::clamp(std::round(ipd), 0.0, 255.0) : ipd;
}

SimTime WindowRateSource::NextStart(const Qp& q) const {
  return q.last_start + static_cast<SimTime>(std::llround(q.spacing_unit * (1 + Ipd(q.rate))));
}

int WindowRateSource::Throttle(HcaView& h, uint32_t qp) {
  return rate_ ? static_cast<int>(std::lround(Ipd(Of(qp).rate))) : -1;
}

Echo WindowRateSource::OnReceive(HcaView& h, int port, Packet& p) {
  wire::Bth bth = p.bth();
  return bth.fecn() && bth.ack_req() ? Echo::kOnAck : Echo::kNone;
}

void WindowRateSource::StartOfFlow(HcaView& h, Qp& q) {
  if (opt_.persistent || q.last_activity < 0) return;
  SimTime gap = opt_.flow_gap > 0 ? opt_.flow_gap
                                  : static_cast<SimTime>(q.spacing_unit / opt_.r_min);  // T_rec
  if (h.Now() - q.last_activity > gap) q.rate = 1;
}

void WindowRateSource::OnSent(HcaView& h, uint32_t qp, const Packet& p) {
  if (!CountedInWindow(p)) return;
  Qp& q = Of(qp);
  StartOfFlow(h, q);
  q.last_start = q.last_activity = h.Now();
  q.spacing_unit = h.SerializationTime(h.QpPort(qp), p.wire_bytes());
  if (opt_.window > 0) q.outstanding.push_back(const_cast<Packet&>(p).bth().psn());
  Reopen(h, qp, q);
}

void WindowRateSource::OnResponse(HcaView& h, uint32_t qp, Packet& p) {
  wire::Bth bth = p.bth();
  if (!IsAck(p)) return;  // a CNP (not part of this scheme) or a NAK
  Qp& q = Of(qp);
  q.last_activity = h.Now();
  if (rate_) q.rate = bth.becn() ? rate_->Decrease(q.rate) : rate_->Increase(q.rate);
  uint32_t psn = bth.psn();
  while (!q.outstanding.empty() && PsnCovers(psn, q.outstanding.front())) q.outstanding.pop_front();
  Reopen(h, qp, q);
}

void WindowRateSource::Reopen(HcaView& h, uint32_t qp, Qp& q) {
  if (opt_.window > 0 && q.outstanding.size() >= static_cast<size_t>(opt_.window)) {
    h.SetQpGate(qp, kGateClosed);
    return;
  }
  h.SetQpGate(qp, rate_ ? NextStart(q) : q.last_start);
}

}  // namespace ibemu::cc::santos
