// IB CC at a channel adapter (IBA annex A10.3): the destination answers FECN with BECN (on the
// ACK or in a CNP); the source raises the CCTI of the QP (or, SL-based, of its SL) by
// CCTI_Increase on each BECN up to CCTI_Limit, a per-(port, SL) CCTI_Timer lowers every CCTI of
// its SL by one per expiry down to CCTI_Min, and each packet is followed by the CCT[CCTI] delay
// before the next of the same QP (or SL). Settings are read from the port's CCA as they are now.
#pragma once
#include <vector>

#include "emulator/cc/hca_cc.h"
#include "emulator/cc/ib/ib_cc_options.h"

namespace ibemu::cc::ib {

class CaThrottling : public HcaCc {
 public:
  explicit CaThrottling(const Options& o) : opt_(o) {}

  Echo OnReceive(HcaView& h, int port, Packet& p) override;
  void OnResponse(HcaView& h, uint32_t qp, Packet& p) override;
  void OnSent(HcaView& h, uint32_t qp, const Packet& p) override;
  void OnTimer(HcaView& h, uint32_t a, uint64_t b) override;
  int Throttle(HcaView& h, uint32_t qp) override { return Ccti(h, qp); }

 private:
  struct Timer {
    bool running = false;
    uint64_t generation = 0;  // events of a timer restarted since are stale
  };
  bool SlBased(HcaView& h, int port) { return h.Cca(port).ca.port_control & 1; }
  uint16_t& Ccti(HcaView& h, uint32_t qp);
  void StartTimer(HcaView& h, int port, int sl);
  Timer& TimerOf(int port, int sl);

  Options opt_;
  std::vector<uint16_t> qp_ccti_;                  // [qp], QP-based ports
  std::vector<std::array<uint16_t, 16>> sl_ccti_;  // [port][sl], SL-based ports
  std::vector<std::array<Timer, 16>> timers_;      // [port][sl]
};

}  // namespace ibemu::cc::ib
