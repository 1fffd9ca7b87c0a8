#include "emulator/cc/fbicm/cfq_source.h"

#include "emulator/cc/fbicm/fbicm_options.h"

namespace ibemu::cc::fbicm {

// The HCA as the inner mechanism sees it: its QP gates are recorded and combined with the Stop.
class CfqSource::GatedView : public HcaView {
 public:
  GatedView(HcaView& h, CfqSource& s) : h_(h), s_(s) {}
  SimTime Now() const override { return h_.Now(); }
  int NumPorts() const override { return h_.NumPorts(); }
  mgmt::CcState& Cca(int port) override { return h_.Cca(port); }
  uint32_t NumQps() const override { return h_.NumQps(); }
  int QpPort(uint32_t qp) const override { return h_.QpPort(qp); }
  int QpSl(uint32_t qp) const override { return h_.QpSl(qp); }
  uint32_t QpNumber(uint32_t qp) const override { return h_.QpNumber(qp); }
  uint16_t QpRemoteLid(uint32_t qp) const override { return h_.QpRemoteLid(qp); }
  SimTime SerializationTime(int port, uint32_t bytes) const override {
    return h_.SerializationTime(port, bytes);
  }
  uint32_t Mtu() const override { return h_.Mtu(); }
  void SetQpGate(uint32_t qp, SimTime t) override {
    if (s_.throttle_gate_.size() <= qp) s_.throttle_gate_.resize(qp + 1u, 0);
    s_.throttle_gate_[qp] = t;
    s_.Apply(h_, qp);
  }
  void SetSlGate(int port, int sl, SimTime t) override { h_.SetSlGate(port, sl, t); }
  SimTime QpGate(uint32_t qp) const override { return s_.ThrottleGate(qp); }
  SimTime SlGate(int port, int sl) const override { return h_.SlGate(port, sl); }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { h_.PostTimer(t, a, b); }
  void SendControl(int port, uint32_t a, uint64_t b) override { h_.SendControl(port, a, b); }
  void Report(uint32_t a, uint64_t b) override { h_.Report(a, b); }
  int NumEndNodes() const override { return h_.NumEndNodes(); }
  uint16_t Lid(int port) const override { return h_.Lid(port); }
  int Sl2Vl(int port, int sl) const override { return h_.Sl2Vl(port, sl); }
  int DataVls(int port) const override { return h_.DataVls(port); }
  void SendMad(int port, uint16_t dlid, int sl, int vl, const uint8_t* mad) override {
    h_.SendMad(port, dlid, sl, vl, mad);
  }

 private:
  HcaView& h_;
  CfqSource& s_;
};

void CfqSource::Apply(HcaView& h, uint32_t qp) {
  h.SetQpGate(qp, Stopped(h.QpRemoteLid(qp)) ? kGateClosed : ThrottleGate(qp));
}

Echo CfqSource::OnReceive(HcaView& h, int port, Packet& p) {
  if (!inner_) return Echo::kNone;
  GatedView v(h, *this);
  return inner_->OnReceive(v, port, p);
}

void CfqSource::OnResponse(HcaView& h, uint32_t qp, Packet& p) {
  if (!inner_) return;
  GatedView v(h, *this);
  inner_->OnResponse(v, qp, p);
}

void CfqSource::OnSent(HcaView& h, uint32_t qp, const Packet& p) {
  if (!inner_) return;
  GatedView v(h, *this);
  inner_->OnSent(v, qp, p);
}

void CfqSource::OnTimer(HcaView& h, uint32_t a, uint64_t b) {
  if (!inner_) return;
  GatedView v(h, *this);
  inner_->OnTimer(v, a, b);
}

int CfqSource::Throttle(HcaView& h, uint32_t qp) {
  if (!inner_) return -1;
  GatedView v(h, *this);
  return inner_->Throttle(v, qp);
}

void CfqSource::OnControl(HcaView& h, int, uint32_t a, uint64_t b) {
  uint16_t dlid = static_cast<uint16_t>(b);
  bool stop = (a & 0xFF) == kStop;
  if (stopped_.size() <= dlid) stopped_.resize(dlid + 1u, 0);
  if (stopped_[dlid] == stop) return;
  stopped_[dlid] = stop;
  for (uint32_t qp = 0; qp < h.NumQps(); ++qp)
    if (h.QpRemoteLid(qp) == dlid) Apply(h, qp);
}

}  // namespace ibemu::cc::fbicm
