// The channel adapter of DBBM and DDBBM: at the source, the queue of each message (as its SL or
// its VL, with the congestion bit latched per message [D:L107]) from the status bit of its
// destination (SBV, set by notices [D:L95]); at the destination, DDBBM's detector and the notices
// it sends (a GMP, notice_mad.h).
#pragma once
#include <memory>
#include <vector>

#include "emulator/cc/dbbm/congestion_detector.h"
#include "emulator/cc/dbbm/dbbm_options.h"
#include "emulator/cc/hca_cc.h"

namespace ibemu::cc::dbbm {

class DbbmCa : public HcaCc {
 public:
  explicit DbbmCa(const Options& o) : opt_(o) {}
  Echo OnReceive(HcaView& h, int port, Packet& p) override;
  void OnTimer(HcaView& h, uint32_t port, uint64_t) override;
  bool OnMad(HcaView& h, int port, uint16_t slid, const uint8_t* mad) override;
  void RouteMessage(HcaView& h, uint32_t qp, MessageRoute& m) override;

  // For tests and results: whether destination `lid` is marked congested here.
  bool Congested(uint16_t lid) const { return lid < sbv_.size() && sbv_[lid]; }
  uint64_t notices_sent() const { return notices_sent_; }

 private:
  CongestionDetector& Detector(HcaView& h, int port);
  void Send(HcaView& h, int port, const std::vector<Notice>& notices);

  Options opt_;
  std::vector<std::unique_ptr<CongestionDetector>> detectors_;  // [port], from the first packet
  std::vector<uint8_t> frame_running_;                          // [port]
  std::vector<uint8_t> sbv_;                                    // [destination LID]
  std::vector<Notice> pending_;
  uint64_t tid_ = 0;
  uint64_t notices_sent_ = 0;
};

}  // namespace ibemu::cc::dbbm
