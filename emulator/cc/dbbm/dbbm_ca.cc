#include "emulator/cc/dbbm/dbbm_ca.h"

#include "common/mad/mad_header.h"
#include "emulator/cc/dbbm/notice_mad.h"
#include "emulator/cc/dbbm/queue_map.h"

namespace ibemu::cc::dbbm {

CongestionDetector& DbbmCa::Detector(HcaView& h, int port) {
  if (static_cast<size_t>(port) >= detectors_.size()) {
    detectors_.resize(port + 1u);
    frame_running_.resize(port + 1u, 0);
  }
  if (!detectors_[port]) {
    // DT and LT are fractions of the most the link can deliver in a frame [D:L184].
    constexpr uint32_t kProbe = 1000000;
    double bytes_per_ps = kProbe / static_cast<double>(h.SerializationTime(port, kProbe));
    detectors_[port] = std::make_unique<CongestionDetector>(
        opt_, bytes_per_ps * static_cast<double>(opt_.tf), h.NumEndNodes());
  }
  return *detectors_[port];
}

Echo DbbmCa::OnReceive(HcaView& h, int port, Packet& p) {
  if (!opt_.dynamic) return Echo::kNone;
  CongestionDetector& d = Detector(h, port);
  pending_.clear();
  d.OnPacket(p.lrh().slid(), p.wire_bytes(), &pending_);
  Send(h, port, pending_);
  if (!frame_running_[port]) {
    // Frames are aligned on multiples of TF, so every destination's frames end together.
    frame_running_[port] = 1;
    h.PostTimer((h.Now() / opt_.tf + 1) * opt_.tf, static_cast<uint32_t>(port), 0);
  }
  return Echo::kNone;
}

void DbbmCa::OnTimer(HcaView& h, uint32_t port, uint64_t) {
  CongestionDetector& d = Detector(h, static_cast<int>(port));
  bool idle = d.idle();
  pending_.clear();
  d.EndFrame(&pending_);
  Send(h, static_cast<int>(port), pending_);
  if (idle) {
    frame_running_[port] = 0;  // the next packet starts the frames again
    return;
  }
  h.PostTimer(h.Now() + opt_.tf, port, 0);
}

void DbbmCa::Send(HcaView& h, int port, const std::vector<Notice>& notices) {
  mad::MadBuffer mad;
  for (const Notice& n : notices) {
    EncodeNotice(mad.data(), ++tid_, h.Lid(port), n.congested);
    // A notice goes in the DBBM queue of the source it is for, never the dynamic one.
    int q = QueueOf(n.source, false, opt_.queues);
    if (opt_.form == Form::kIb)
      h.SendMad(port, n.source, q, h.Sl2Vl(port, q), mad.data());
    else
      h.SendMad(port, n.source, 0, q, mad.data());
    ++notices_sent_;
  }
}

bool DbbmCa::OnMad(HcaView&, int, uint16_t, const uint8_t* mad) {
  uint16_t lid;
  bool congested;
  if (!DecodeNotice(mad, &lid, &congested)) return false;
  // An explicit state, not the paper's toggle: a lost or repeated notice cannot invert it.
  if (lid >= sbv_.size()) sbv_.resize(lid + 1u, 0);
  sbv_[lid] = congested ? 1 : 0;
  return true;
}

void DbbmCa::RouteMessage(HcaView& h, uint32_t qp, MessageRoute& m) {
  uint16_t dlid = h.QpRemoteLid(qp);
  bool congested = opt_.dynamic && Congested(dlid);
  int q = QueueOf(dlid, congested, opt_.queues);
  if (opt_.form == Form::kIb) {
    m.sl = static_cast<uint8_t>(q);
    m.vl = static_cast<uint8_t>(h.Sl2Vl(h.QpPort(qp), q));
  } else {
    m.vl = static_cast<uint8_t>(q);
    if (congested) m.resv6a |= kCbInResv6a;
  }
}

}  // namespace ibemu::cc::dbbm
