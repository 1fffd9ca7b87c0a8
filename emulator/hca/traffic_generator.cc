// The traffic generator (docs/blocks/hca_send.md): message arrivals per source (on/off, Poisson or
// constant), destinations from the pattern, and the QP each message goes out on.

#include <algorithm>
#include <cmath>

#include "emulator/hca/hca.h"

namespace ibemu::hca {

double Hca::Uniform01() {
  // 53 random bits: std::uniform_real_distribution is implementation-defined, this is not.
  return static_cast<double>(rng_() >> 11) * 0x1.0p-53;
}

SimTime Hca::NextOnTime(const TrafficSource& s, SimTime t) const {
  if (s.onoff.on <= 0) return t;
  SimTime period = s.onoff.on + s.onoff.off;
  SimTime phase = (t - s.start) % period;
  return phase < s.onoff.on ? t : t + (period - phase);
}

void Hca::ScheduleNextArrival(uint32_t source, SimTime after) {
  const TrafficSource& s = sources_[source].cfg;
  if (s.rate_bps <= 0) return;
  double mean_ps = static_cast<double>(s.message_bytes) * 8.0 *
                   static_cast<double>(link::kPsPerSec) / static_cast<double>(s.rate_bps);
  double gap = s.arrival == Arrival::kPoisson ? -std::log(1.0 - Uniform01()) * mean_ps : mean_ps;
  SimTime t = NextOnTime(s, after + std::max<SimTime>(1, static_cast<SimTime>(gap)));
  if (t < s.stop) Post(id(), t, kMessage, 0, source);
}

uint16_t Hca::PickDestination(SourceState& s) {
  SimTime t = s.cfg.cycle > 0 ? now() % s.cfg.cycle : now();
  size_t k = 0;
  while (k + 1 < s.cfg.phases.size() && s.cfg.phases[k + 1].from <= t) ++k;
  const TrafficSource::Phase& ph = s.cfg.phases[k];
  if (ph.dlids.size() == 1) return ph.dlids[0];
  if (ph.cum_weights.empty())
    return ph.dlids[static_cast<size_t>(Uniform01() * static_cast<double>(ph.dlids.size()))];
  uint32_t x = static_cast<uint32_t>(Uniform01() * ph.cum_weights.back());
  size_t i =
      std::upper_bound(ph.cum_weights.begin(), ph.cum_weights.end(), x) - ph.cum_weights.begin();
  return ph.dlids[std::min(i, ph.dlids.size() - 1)];
}

uint32_t Hca::QpFor(uint32_t source, uint16_t dlid) {
  bool added;
  uint32_t& index = qp_index_.Get(uint64_t{source} << 16 | dlid, &added);
  if (!added) return index;
  QueuePair qp;
  qp.source = source;
  qp.dlid = dlid;
  qp.port = static_cast<uint8_t>(sources_[source].cfg.port);
  qp.path_sl = qp.sl = PathSl(qp.port, dlid, sources_[source].cfg.sl);
  qp.qpn = 0x100 + static_cast<uint32_t>(qps_.size());
  qps_.push_back(qp);
  index = static_cast<uint32_t>(qps_.size() - 1);  // set once the QP is there
  return index;
}

void Hca::NewMessage(uint32_t source) {
  SourceState& s = sources_[source];
  // Set before queuing: a message sent whole inside the arbitration queues the next one there.
  if (s.cfg.arrival == Arrival::kSaturate) s.waiting = true;
  QueueMessage(source, PickDestination(s), s.cfg.message_bytes);
}

void Hca::QueueMessage(uint32_t source, uint16_t dlid, uint32_t bytes) {
  uint32_t qi = QpFor(source, dlid);
  QueuePair& qp = qps_[qi];
  bool was_idle = qp.messages.empty();
  qp.messages.push_back({bytes, now()});
  if (cc_hooks_) cc_hooks_->OnMessageQueued(*this, qi, was_idle);
  ++flows_->flows[sources_[source].cfg.flow].messages;
  if (was_idle) RouteFront(qi);
  if (!qp.in_ring) {
    qp.in_ring = true;
    pstate_[qp.port].rings[qp.vl].qps.push_back(qi);
  }
  Arbitrate(qp.port);
}

int Hca::RouteFront(uint32_t qi) {
  QueuePair& qp = qps_[qi];
  qp.sl = qp.path_sl;
  qp.vl = sl2vl_[qp.port][qp.sl];
  qp.resv6a = 0;
  if (cc_hooks_) {
    cc::MessageRoute m{qp.sl, qp.vl, 0};
    cc_hooks_->RouteMessage(*this, qi, m);
    qp.sl = m.sl;
    qp.vl = m.vl;
    qp.resv6a = m.resv6a;
  }
  return qp.vl;
}

}  // namespace ibemu::hca
