// DDBBM's congestion detector at a destination (Nachiondo et al. §3.1, [D:L69-L91]): per frame
// of TF, the bytes received (ORB) and the bytes from each source (SRB); at the end of a frame
// the congestion bit CB is set or cleared, and the notification bit vector NBV says which
// sources were told. What it decides is returned as the notices to send; sending is the CA's.
#pragma once
#include <cstdint>
#include <vector>

#include "emulator/cc/dbbm/dbbm_options.h"

namespace ibemu::cc::dbbm {

struct Notice {
  uint16_t source;  // the LID to tell
  bool congested;   // start (true) or end of congestion
};

class CongestionDetector {
 public:
  // `max_frame_bytes`: what the link can deliver in one frame; `end_nodes`: N of the SIT test.
  CongestionDetector(const Options& o, double max_frame_bytes, int end_nodes);

  // A data packet of `bytes` from `source`. While congested, a source not yet told is told now.
  void OnPacket(uint16_t source, uint32_t bytes, std::vector<Notice>* out);
  // The frame ends: decide CB and start the next frame.
  void EndFrame(std::vector<Notice>* out);

  bool congested() const { return cb_; }
  // Whether the last frame received anything (the CA stops its frame timer while idle).
  bool idle() const { return orb_ == 0 && !cb_; }
  uint64_t frames_congested() const { return frames_congested_; }

 private:
  Options opt_;
  double max_frame_bytes_;
  int end_nodes_;
  bool cb_ = false;
  uint64_t orb_ = 0;
  std::vector<uint64_t> srb_;       // by source LID
  std::vector<uint16_t> sources_;   // LIDs with SRB > 0 this frame
  std::vector<uint8_t> nbv_;        // by source LID: told of the present congestion
  std::vector<uint16_t> notified_;  // LIDs with NBV set
  uint64_t frames_congested_ = 0;
};

}  // namespace ibemu::cc::dbbm
