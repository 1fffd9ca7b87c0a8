#include "emulator/cc/mvcm/mvcm_source.h"

#include "common/wire/bth.h"
#include "common/wire/opcode.h"
#include "emulator/cc/rc_window.h"

namespace ibemu::cc::mvcm {
MvcmSource::Flow& MvcmSource::Of(uint32_t qp) {
  while (flows_.size() <= qp) flows_.emplace_back().dw = opt_.dw_max;
  return flows_[qp];
}

void MvcmSource::OnAck(HcaView& h, Packet& data, Packet& ack) {
  wire::Bth d = data.bth();
  wire::Bth a = ack.bth();
  a.set_becn(d.fecn());
  a.set_resv6a(static_cast<uint8_t>(a.resv6a() | (d.resv6a() & kVbInResv6a)));
}

MvcmSource::Ack MvcmSource::Classify(bool mb, bool vb) const {
  if (opt_.pure_ipm) return mb ? Ack::kHot : Ack::kCold;
  if (mb && vb) return Ack::kHot;
  if (mb && opt_.warm) return Ack::kWarm;
  return Ack::kCold;
}

void MvcmSource::Apply(uint32_t qp, Ack a, SimTime now, SimTime rtt) {
  Flow& f = Of(qp);
  bool shrink = opt_.dynamic_window && f.dw > 1;
  switch (a) {
    case Ack::kHot:
      // Imminent actions: the window first, then waiting slots once it is down to one [M:L200].
      if (shrink) {
        --f.dw;
      } else if (opt_.waiting_slots) {
        if (f.num_ws == 0)
          f.num_ws = 1;
        else if (f.num_ws * static_cast<uint64_t>(opt_.k) <= (max_ws_ ? max_ws_ : kNoCapWs))
          f.num_ws *= static_cast<uint64_t>(opt_.k);  // eq. (1); at the cap: the floor rate
      }
      break;
    case Ack::kWarm:
      // Moderate actions: the window only; at one nothing more [M:L198].
      if (shrink) --f.dw;
      break;
    case Ack::kCold:
      // The first unmarked ACK removes the waiting interval at once; the next ones give the
      // window back one by one [M:L208].
      if (f.num_ws > 0) {
        f.num_ws = 0;
        f.wait_until = 0;
      } else if (opt_.dynamic_window && f.dw < opt_.dw_max) {
        ++f.dw;
      }
      return;
  }
  // While there are slots, every packet waits them out after the ACK that opens the window
  // (notes A.6.8), a warm ACK's too: it leaves the slots as they are, not gone.
  if (f.num_ws > 0) {
    double wait = static_cast<double>(f.num_ws) * static_cast<double>(rtt);
    f.wait_until = wait >= static_cast<double>(kGateClosed - now)
                       ? kGateClosed - 1
                       : now + static_cast<SimTime>(wait);
  }
}

void MvcmSource::Gate(HcaView& h, uint32_t qp, const Flow& f) {
  if (f.outstanding.size() >= static_cast<size_t>(f.dw))
    h.SetQpGate(qp, kGateClosed);
  else
    h.SetQpGate(qp, f.wait_until);
}

void MvcmSource::OnSent(HcaView& h, uint32_t qp, const Packet& p) {
  if (!CountedInWindow(p)) return;
  Flow& f = Of(qp);
  f.outstanding.push_back({const_cast<Packet&>(p).bth().psn(), h.Now()});
  Gate(h, qp, f);
}

void MvcmSource::OnResponse(HcaView& h, uint32_t qp, Packet& p) {
  if (!IsAck(p)) return;  // a CNP or a NAK
  wire::Bth bth = p.bth();
  Flow& f = Of(qp);
  uint32_t psn = bth.psn();
  SimTime sent = -1;  // of the newest packet acknowledged: the ACK answers it
  while (!f.outstanding.empty() && PsnCovers(psn, f.outstanding.front().psn)) {
    sent = f.outstanding.front().at;
    f.outstanding.pop_front();
  }
  if (sent < 0) return;  // a duplicate: its marks were counted with the first
  f.rtt_min = std::min(f.rtt_min, h.Now() - sent);
  SimTime rtt = opt_.rtt_min > 0 ? opt_.rtt_min : f.rtt_min;
  Apply(qp, Classify(bth.becn(), bth.resv6a() & kVbInResv6a), h.Now(), rtt);
  Gate(h, qp, f);
}

void MvcmSource::OnMessageQueued(HcaView& h, uint32_t qp, bool was_idle) {
  Flow& f = Of(qp);
  if (!opt_.reset_on_idle || !was_idle || !f.outstanding.empty()) return;
  if (f.dw == opt_.dw_max && f.num_ws == 0) return;
  f.dw = opt_.dw_max;
  f.num_ws = 0;
  f.wait_until = 0;
  Gate(h, qp, f);
}

int MvcmSource::Throttle(HcaView& h, uint32_t qp) {
  return static_cast<int>(std::min<uint64_t>(Of(qp).num_ws, INT32_MAX));
}

}  // namespace ibemu::cc::mvcm
