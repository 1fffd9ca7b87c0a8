#include "emulator/cc/ib/switch_marking.h"

#include "common/wire/bth.h"
#include "common/wire/lrh.h"
#include "emulator/cc/ib/cct.h"

namespace ibemu::cc::ib {

void SwitchMarking::Init(SwitchView& s) {
  ports_ = s.NumPorts() + 1;
  vls_ = s.DataVls();
  state_.assign(static_cast<size_t>(ports_) * vls_, 0);
  if (opt_.evaluation == Evaluation::kVoq)
    voq_above_.assign(static_cast<size_t>(ports_) * vls_ * ports_, 0);
  since_mark_.assign(static_cast<size_t>(ports_), 0);
  // Fixed by the switch's configuration, and read on every enqueue, dequeue and transmit: taken
  // once rather than through the view's virtual calls each time. The settings themselves are
  // read where they live, so that a Set acts on the next packet.
  obuf_cap_ = s.OutputBufferCapacityBlocks();
  vl_cap_ = s.VlCapacityBlocks();
  level_cap_ = obuf_cap_ > 0 ? obuf_cap_ : vl_cap_;
  cca_ = &s.Cca();
}

SwitchMarking::PortSettings SwitchMarking::SettingsOf(const mgmt::CcState& cc, int out) {
  // A valid SwitchPortCongestionSetting overrides the switch's for its port: Control_Type 0 with
  // its own marking settings, Control_Type 1 with credit starvation instead of marking.
  if (static_cast<size_t>(out) < cc.ports.size()) {
    const mgmt::SwitchPortCongestionSetting& p = cc.ports[out];
    if (p.valid && p.control_type == 0) return {p.threshold, p.packet_size, p.marking_rate};
    if (p.valid && p.control_type == 1) return {0, 0, 0};
  }
  return {cc.sw.threshold, cc.sw.packet_size, cc.sw.marking_rate};
}

bool SwitchMarking::Congested(int out, int vl) const {
  return !state_.empty() && state_[PortVl(out, vl)] != 0;
}

void SwitchMarking::Evaluate(SwitchView& s, int in, int out, int vl) {
  // On a switch with output buffers (CIOQ) the Port VL's queue is its output buffer first: the
  // threshold is taken of that buffer, and the sum counts it beside the inputs' packets for it.
  uint32_t level = Level(SettingsOf(*cca_, out).threshold, level_cap_);
  // Entered above the level, left at or below the lower level (level - hysteresis, at least 0:
  // an empty queue always leaves).
  uint32_t lower = level > opt_.hysteresis_blocks ? level - opt_.hysteresis_blocks : 0;
  auto next = [&](bool congested, uint32_t occ) {
    if (level == UINT32_MAX) return false;
    return occ > (congested ? lower : level);
  };
  uint16_t& st = state_[PortVl(out, vl)];
  // What has arrived is at most what is queued, and the queued count is at hand: the arrived
  // count (a pass over the inputs) is needed only when the queued one is above the bound.
  uint32_t bound = st != 0 ? lower : level;
  switch (opt_.evaluation) {
    case Evaluation::kSum: {
      uint32_t ob = obuf_cap_ > 0 ? s.OutputBufferBlocks(out, vl) : 0;
      st = s.QueuedBlocks(out, vl) + ob > bound && next(st != 0, s.ArrivedBlocks(out, vl) + ob);
      return;
    }
    case Evaluation::kSumPerInput: {
      int k = s.ContributingInputs(out, vl);
      if (k == 0 || s.QueuedBlocks(out, vl) / static_cast<uint32_t>(k) <= bound) {
        st = 0;
        return;
      }
      st = next(st != 0, s.ArrivedBlocks(out, vl) / static_cast<uint32_t>(k));
      return;
    }
    case Evaluation::kVoq: {
      uint8_t& above = voq_above_[PortVl(out, vl) * ports_ + in];
      bool now = next(above != 0, s.ArrivedBlocksFrom(in, out, vl));
      if (now != (above != 0)) {
        st = static_cast<uint16_t>(now ? st + 1 : st - 1);
        above = now;
      }
      return;
    }
  }
}

void SwitchMarking::OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {
  if (state_.empty()) Init(s);
  evaluated_ = nullptr;
  Evaluate(s, in, out, out_vl);
}

void SwitchMarking::OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl,
                              const Packet& p) {
  if (state_.empty()) Init(s);
  Evaluate(s, in, out, out_vl);
  evaluated_ = obuf_cap_ == 0 && opt_.evaluation != Evaluation::kVoq ? &p : nullptr;
  evaluated_out_ = out;
  evaluated_vl_ = out_vl;
  evaluated_at_ = s.Now();
}

void SwitchMarking::OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) {
  if (state_.empty()) Init(s);
  bool fresh =
      evaluated_ == p && evaluated_out_ == out && evaluated_vl_ == vl && evaluated_at_ == s.Now();
  evaluated_ = nullptr;
  PortSettings ps = SettingsOf(*cca_, out);
  if (ps.threshold == 0) return;
  // Tails have arrived since the last enqueue or dequeue: bring the state up to now, unless the
  // dequeue of this very packet did so at this instant.
  if (opt_.evaluation == Evaluation::kVoq) {
    for (int i = 0; i < ports_; ++i) Evaluate(s, i, out, vl);
  } else if (!fresh) {
    Evaluate(s, in, out, vl);
  }
  if (!Congested(out, vl)) return;
  mgmt::CcState& cc = *cca_;
  // A Port VL that waited for credits is a victim of congestion further on: it marks only if
  // its port is in Victim_Mask (typically the ports that face CAs).
  bool victim_ok = cc.sw.victim_mask[31 - out / 8] >> (out % 8) & 1;
  if (s.CreditStarved(out, vl) && !victim_ok) return;
  if (p->blocks() < ps.packet_size || p->hdr_len < wire::kLrhBytes + wire::kBthBytes) return;
  wire::Bth bth = p->bth();
  if (bth.fecn()) return;
  if (ps.marking_rate > 0) {
    if (opt_.marking == Marking::kRandom) {
      if (rng_() % (uint64_t{ps.marking_rate} + 1) != 0) return;
    } else if (since_mark_[out]++ < ps.marking_rate) {
      return;
    }
    since_mark_[out] = 0;
  }
  bth.set_fecn(true);
  wire::Lrh lrh = p->lrh();
  mgmt::CongestionEvent e;
  e.slid = lrh.slid();
  e.dlid = lrh.dlid();
  e.sl = lrh.sl();
  e.timestamp = static_cast<uint32_t>(s.Now() / mgmt::kPsPerCcTick);
  cc.log.Add(e, 15);
  cc.log.MarkBit(out);
}

// Our reading of credit starvation (docs/cc/ib.md, "Credit starvation"): the output port's
// SwitchPortCongestionSetting of Control_Type 1 gives CS_Threshold (its Threshold) and
// CS_ReturnDelay (its Cong_Parm); otherwise a port in Credit_Mask takes the switch's. Above the
// CS_Threshold level (mapped as Threshold is), the credits come back CS_ReturnDelay late, a
// shift:multiplier value on the base of CCT entries: cct_base_ns, or the packet's own time on
// the input link.
SimTime SwitchMarking::CreditReturnDelay(SwitchView& s, int in, int in_vl, int out, int out_vl,
                                         const Packet& p) {
  if (state_.empty()) Init(s);
  const mgmt::CcState& cc = *cca_;
  uint8_t cs_threshold = 0;
  uint16_t delay = 0;
  const mgmt::SwitchPortCongestionSetting* e =
      static_cast<size_t>(out) < cc.ports.size() ? &cc.ports[out] : nullptr;
  if (e && e->valid && e->control_type == 1) {
    cs_threshold = e->threshold;
    delay = e->marking_rate;
  } else if (cc.sw.credit_mask[31 - out / 8] >> (out % 8) & 1) {
    cs_threshold = cc.sw.cs_threshold;
    delay = cc.sw.cs_return_delay;
  } else {
    return 0;
  }
  if (delay == 0 || s.QueuedBlocks(out, out_vl) <= Level(cs_threshold, vl_cap_)) return 0;
  SimTime base = opt_.cct_base > 0 ? opt_.cct_base : s.SerializationTime(in, p.wire_bytes());
  return CctDelay(delay, base);
}

}  // namespace ibemu::cc::ib
