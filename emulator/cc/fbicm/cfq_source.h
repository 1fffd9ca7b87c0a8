// FBICM's and CCFIT's channel adapter: its switch's CFQ Stop/Go reaches it (L5852-L5853), and a
// stopped flow's QPs wait (a synthetic QP is one destination's admittance queue, the paper's
// AdVOQ, so stopping it blocks nothing else). For CCFIT an inner mechanism throttles too (IB
// CC's CCT and CCTI per QP, L5847-L5880); its gates and the Stop compose: a QP sends at the later
// of its throttle gate and its flow's Go.
#pragma once
#include <memory>
#include <vector>

#include "emulator/cc/hca_cc.h"

namespace ibemu::cc::fbicm {

class CfqSource : public HcaCc {
 public:
  explicit CfqSource(std::unique_ptr<HcaCc> inner) : inner_(std::move(inner)) {}

  Echo OnReceive(HcaView& h, int port, Packet& p) override;
  void OnResponse(HcaView& h, uint32_t qp, Packet& p) override;
  void OnSent(HcaView& h, uint32_t qp, const Packet& p) override;
  void OnTimer(HcaView& h, uint32_t a, uint64_t b) override;
  void OnControl(HcaView& h, int port, uint32_t a, uint64_t b) override;
  int Throttle(HcaView& h, uint32_t qp) override;

  bool Stopped(uint16_t dlid) const { return dlid < stopped_.size() && stopped_[dlid]; }

 private:
  class GatedView;
  SimTime ThrottleGate(uint32_t qp) const {
    return qp < throttle_gate_.size() ? throttle_gate_[qp] : 0;
  }
  void Apply(HcaView& h, uint32_t qp);

  std::unique_ptr<HcaCc> inner_;
  std::vector<uint8_t> stopped_;        // [DLID]
  std::vector<SimTime> throttle_gate_;  // [QP]: what the inner mechanism set
};

}  // namespace ibemu::cc::fbicm
