// The channel adapter as a device: its blocks built from the configuration, the events dispatched
// to them, and link and VLArbitrationTable changes. The blocks are traffic_generator.cc,
// send_scheduler.cc, sink.cc and hca_management.cc (docs/blocks/).

#include "emulator/hca/hca.h"

#include "emulator/mgmt/sma.h"

namespace ibemu::hca {

Hca::Hca(engine::LpId id, std::string name, int num_ports, const HcaConfig& cfg,
         const link::FabricContext* ctx, stats::FlowTable* flows, uint64_t seed)
    : ManagedNode(id, std::move(name), num_ports),
      cfg_(cfg),
      ctx_(ctx),
      flows_(flows),
      sl2vl_(num_ports + 1),
      pstate_(num_ports + 1),
      rng_(seed) {
  for (auto& m : sl2vl_)
    for (int sl = 0; sl < 16; ++sl) m[sl] = static_cast<uint8_t>(sl % cfg_.data_vls);
  for (auto& ps : pstate_) {
    ps.rings.resize(cfg_.data_vls);
    policy::VlArbConfig vc = cfg_.vlarb_config;
    vc.data_vls = cfg_.data_vls;
    ps.vlarb = policy::VlArbiterRegistry::Get().Make(cfg_.vlarb, vc);
  }
}

void Hca::Start() {
  Device::Start();
  // QPs are created as destinations are first used, and qps_ grows as they are: no reserve for
  // every destination. On the 11,664-host tree that was 0.9 MB per HCA, mostly never touched,
  // which with the heap on huge pages (docs/cli.md) became 10 GB of resident memory.
  for (uint32_t i = 0; i < sources_.size(); ++i) {
    const TrafficSource& s = sources_[i].cfg;
    if (s.trace) {
      size_t ranks = s.trace->ranks.size();
      sources_[i].trace.arrived.assign(ranks, 0);
      sources_[i].trace.taken.assign(ranks, 0);
      trace_sources_.push_back(i);
      Post(id(), s.start, kTraceStep, 0, i);
    } else if (s.arrival == Arrival::kSaturate)
      Post(id(), NextOnTime(s, s.start), kMessage, 0, i);
    else
      ScheduleNextArrival(i, s.start);
  }
}

void Hca::HandleDevice(const engine::Event& e) {
  switch (e.kind) {
    case kCcTimer:
      if (cc_hooks_) cc_hooks_->OnTimer(*this, e.a, e.b);
      return;
    case engine::kSideBandArrive:
      if (cc_hooks_) cc_hooks_->OnSignal(*this, e.a, e.b);
      return;
    case kMessage: {
      const TrafficSource& s = sources_[e.a].cfg;
      if (now() >= s.stop) return;
      NewMessage(e.a);
      if (s.arrival != Arrival::kSaturate) ScheduleNextArrival(e.a, now());
      return;
    }
    case kSinkDone:
      Deliver(e.port, e.pkt);
      return;
    case kVerbsKick:
      VerbsKick(e.a);
      return;
    case kVerbsTimer:
      VerbsTimer(e.a, e.b);
      return;
    case kVerbsLoopback:
      VerbsReceive(e.port, e.pkt);
      return;
    case kTraceStep:
      TraceStep(e.a);
      return;
  }
}

void Hca::VlArbChanged(int p) {
  if (p < 1 || p > num_ports()) return;
  pstate_[p].vlarb = policy::VlArbiterRegistry::Get().Make(
      cfg_.vlarb, mgmt::VlArbConfigOf(port_mgmt_[p], cfg_.vlarb_config, cfg_.data_vls));
}

void Hca::OnLinkChanged(int p, bool up) {
  if (up) {
    Arbitrate(p);
    return;
  }
  // Work that can no longer leave counts against its retries from now on (verbs_transport.cc).
  for (uint32_t qi = 0; qi < verbs_qps_.size(); ++qi)
    if (verbs_qps_[qi] && verbs_qps_[qi]->attr.port == p) VerbsPortDown(qi);
}

}  // namespace ibemu::hca
