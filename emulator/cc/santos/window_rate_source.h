// Santos et al.'s sources (INFOCOM 2003 §V, [S:L117-L129]; ../shared/notes/mvcm_santos.md B.1.4,
// B.1.6): each QP keeps at most `window` packets unacknowledged and a rate limit r in
// [R_min, R_max] that every ACK moves, down on a marked one (BECN) and up on an unmarked one.
// A packet starts no earlier than the later of its window opening and the previous packet's
// start plus the previous packet's time at the link rate divided by r, i.e. (1 + IPD) packet
// times with IPD = 1/r - 1 (discrete: rounded to a whole 0..255). Every data packet asks for
// an ACK, which is the clock. The destination echoes FECN on the ACK (no CNPs in this scheme).
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "emulator/cc/hca_cc.h"
#include "emulator/cc/santos/rate_functions.h"
#include "emulator/cc/santos/santos_options.h"

namespace ibemu::cc::santos {

class WindowRateSource : public HcaCc {
 public:
  explicit WindowRateSource(const Options& o);

  Echo OnReceive(HcaView& h, int port, Packet& p) override;
  void OnResponse(HcaView& h, uint32_t qp, Packet& p) override;
  void OnSent(HcaView& h, uint32_t qp, const Packet& p) override;
  bool AckEachPacket() const override { return opt_.window > 0 || rate_ != nullptr; }
  // The IPD the rate stands for, in packet times (0 at R_max).
  int Throttle(HcaView& h, uint32_t qp) override;

  // For tests: QP qp's rate (1 = R_max) and unacknowledged packets.
  double Rate(uint32_t qp) const { return qp < qps_.size() ? qps_[qp].rate : 1.0; }
  size_t Outstanding(uint32_t qp) const {
    return qp < qps_.size() ? qps_[qp].outstanding.size() : 0;
  }

 private:
  struct Qp {
    double rate = 1;
    SimTime last_start = 0, spacing_unit = 0;  // the last packet's start and link time
    SimTime last_activity = -1;
    std::deque<uint32_t> outstanding;  // PSNs sent and not yet acknowledged, oldest first
  };
  Qp& Of(uint32_t qp);
  double Ipd(double rate) const;
  SimTime NextStart(const Qp& q) const;
  void Reopen(HcaView& h, uint32_t qp, Qp& q);
  void StartOfFlow(HcaView& h, Qp& q);

  Options opt_;
  std::unique_ptr<RateFunction> rate_;  // null: no rate control
  std::vector<Qp> qps_;
};

}  // namespace ibemu::cc::santos
