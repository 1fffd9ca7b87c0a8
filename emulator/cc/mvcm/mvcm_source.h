// MVCM's sources (Ferrer et al., §3.3, Table 1 [M:L180-L210]; ../shared/notes/mvcm_santos.md
// A.1.4): per QP (one per destination: the paper's VOQ per flow) a dynamic window DW of
// unacknowledged packets and a waiting interval between injections, moved by the marks the
// destination echoes on every packet's ACK (BECN = MB, Resv6a = VB):
//   - hot ACK (MB, VB): DW - 1 while DW > 1; at DW = 1 the waiting slots grow, 0 -> 1 -> k ->
//     k^2 ... up to the cap, and the next packet waits number_WS x RTT_min from this ACK;
//   - warm ACK (MB only): DW - 1 while DW > 1, nothing more;
//   - cold ACK: the first removes the waiting slots, the next ones add 1 to DW up to DW_max.
// A message that comes to a QP with nothing queued and nothing outstanding resets DW and WS.
#pragma once
#include <cstdint>
#include <deque>
#include <vector>

#include "emulator/cc/hca_cc.h"
#include "emulator/cc/mvcm/mvcm_options.h"

namespace ibemu::cc::mvcm {

class MvcmSource : public HcaCc {
 public:
  explicit MvcmSource(const Options& o) : opt_(o), max_ws_(o.MaxWs()) {}

  void OnAck(HcaView& h, Packet& data, Packet& ack) override;
  void OnResponse(HcaView& h, uint32_t qp, Packet& p) override;
  void OnSent(HcaView& h, uint32_t qp, const Packet& p) override;
  void OnMessageQueued(HcaView& h, uint32_t qp, bool was_idle) override;
  bool AckEachPacket() const override { return true; }
  // number_WS, the waiting slots between packets.
  int Throttle(HcaView& h, uint32_t qp) override;

  // The ACK classes of Table 1.
  enum class Ack : uint8_t { kCold, kWarm, kHot };
  Ack Classify(bool mb, bool vb) const;
  // Applies one ACK of class `a` arriving at `now` to QP qp's state (the trace tests drive it).
  void Apply(uint32_t qp, Ack a, SimTime now, SimTime rtt);

  // For tests and results.
  int Window(uint32_t qp) const { return qp < flows_.size() ? flows_[qp].dw : opt_.dw_max; }
  uint64_t WaitingSlots(uint32_t qp) const { return qp < flows_.size() ? flows_[qp].num_ws : 0; }
  SimTime WaitUntil(uint32_t qp) const { return qp < flows_.size() ? flows_[qp].wait_until : 0; }

 private:
  struct Flow {
    int dw = 0;
    uint64_t num_ws = 0;
    SimTime wait_until = 0;
    SimTime rtt_min = INT64_MAX;  // measured
    struct Sent {
      uint32_t psn;
      SimTime at;
    };
    std::deque<Sent> outstanding;
  };
  Flow& Of(uint32_t qp);
  void Gate(HcaView& h, uint32_t qp, const Flow& f);

  // Without a cap the slots still stop growing here, far beyond any run's length.
  static constexpr uint64_t kNoCapWs = uint64_t{1} << 40;

  Options opt_;
  uint64_t max_ws_;
  std::vector<Flow> flows_;
};

}  // namespace ibemu::cc::mvcm
