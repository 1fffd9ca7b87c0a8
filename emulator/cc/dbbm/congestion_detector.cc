#include "emulator/cc/dbbm/congestion_detector.h"

namespace ibemu::cc::dbbm {

CongestionDetector::CongestionDetector(const Options& o, double max_frame_bytes, int end_nodes)
    : opt_(o), max_frame_bytes_(max_frame_bytes), end_nodes_(end_nodes > 0 ? end_nodes : 1) {}

void CongestionDetector::OnPacket(uint16_t source, uint32_t bytes, std::vector<Notice>* out) {
  if (source >= srb_.size()) {
    srb_.resize(source + 1u, 0);
    nbv_.resize(source + 1u, 0);
  }
  orb_ += bytes;
  if (srb_[source] == 0) sources_.push_back(source);
  srb_[source] += bytes;
  // NBV matters because SRB is cleared every frame while congestion lasts many [D:L91].
  if (cb_ && !nbv_[source]) {
    nbv_[source] = 1;
    notified_.push_back(source);
    out->push_back({source, true});
  }
}

void CongestionDetector::EndFrame(std::vector<Notice>* out) {
  double basis = opt_.sit_of_max ? max_frame_bytes_ : static_cast<double>(orb_);
  double heavy_above = opt_.sit * basis / end_nodes_;
  int heavy = 0;
  for (uint16_t s : sources_)
    if (static_cast<double>(srb_[s]) > heavy_above) ++heavy;
  // A destination that receives fast is not congested unless a few sources send most of it
  // [D:L75-L77]; SIT 0 turns the test off.
  bool few_sources = opt_.sit == 0 || (opt_.ns_at_least ? heavy >= opt_.ns : heavy > opt_.ns);
  double orb = static_cast<double>(orb_);
  if (orb > opt_.dt * max_frame_bytes_ && few_sources) {
    if (!cb_) {
      cb_ = true;
      for (uint16_t s : sources_) {
        nbv_[s] = 1;
        notified_.push_back(s);
        out->push_back({s, true});
      }
    }
  } else if (orb < opt_.lt * max_frame_bytes_ && cb_) {
    cb_ = false;
    for (uint16_t s : notified_) {
      nbv_[s] = 0;
      out->push_back({s, false});
    }
    notified_.clear();
  }
  if (cb_) ++frames_congested_;
  for (uint16_t s : sources_) srb_[s] = 0;
  sources_.clear();
  orb_ = 0;
}

}  // namespace ibemu::cc::dbbm
