#include "emulator/fabric/runner.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "common/capture/pcap_writer.h"
#include "emulator/engine/digest.h"
#include "emulator/engine/partition.h"

namespace ibemu::fabric {
namespace {

bool TracesDone(const scenario::Scenario& s, const stats::FlowTable& flows) {
  for (size_t i = 0; i < s.flows.size(); ++i)
    if (s.flows[i].trace_ranks > 0 && flows.flows[i].ranks_done < s.flows[i].trace_ranks)
      return false;
  return true;
}

// Writes packets to the capture file up to `until`, and shows the same packets to `also`.
class PcapTap : public PacketTap {
 public:
  PcapTap(capture::PcapWriter* w, SimTime until, PacketTap* also)
      : w_(w), until_(until), also_(also) {}
  void OnTransmit(SimTime t, engine::LpId lp, int port, const Packet& p) override {
    if (t > until_) return;
    if (w_->is_open()) {
      capture::SerializePacket(p.hdr.data(), p.hdr_len, p.payload_len, p.pad(), &buf_);
      w_->Write(t, buf_.data(), buf_.size());
    }
    if (also_) also_->OnTransmit(t, lp, port, p);
  }

 private:
  capture::PcapWriter* w_;
  SimTime until_;
  PacketTap* also_;
  std::vector<uint8_t> buf_;
};

}  // namespace

long PeakRssKb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

uint64_t CombineDigests(const std::vector<uint64_t>& lp_digests) {
  engine::Digest d;
  for (uint64_t v : lp_digests) d.Add(v);
  return d.value();
}

std::vector<PortSummary> SummarizePorts(const Fabric& f, const scenario::Scenario& s) {
  std::vector<PortSummary> out;
  for (const auto& d : f.devices) {
    if (!d) continue;
    for (int p = 1; p <= d->num_ports(); ++p) {
      const link::Port& pt = d->port(p);
      if (!pt.link.connected) continue;
      for (int vl = 0; vl < pt.data_vls; ++vl) {
        PortSummary ps;
        ps.device = d->name();
        ps.peer = s.topo.nodes[pt.link.peer_lp].name;
        ps.port = p;
        ps.vl = vl;
        if (!pt.stats.rx_occupancy.empty())
          ps.mean_occupancy_blocks = pt.stats.rx_occupancy[vl].MeanOverall(s.duration);
        if (!pt.stats.credit_stalled.empty())
          ps.credit_stalled_fraction = pt.stats.credit_stalled[vl].MeanOverall(s.duration);
        // The series up to the end of the run: a fabric that was up for less than its hour
        // of bins reports the bins it lived through.
        size_t bins = pt.stats.rx_occupancy.empty()
                          ? 0
                          : std::min<size_t>(pt.stats.rx_occupancy[vl].bins(),
                                             static_cast<size_t>(std::max(s.bins(), 0)));
        ps.occupancy_series.reserve(bins);
        ps.stalled_series.reserve(bins);
        for (size_t b = 0; b < bins; ++b) {
          ps.occupancy_series.push_back(static_cast<float>(pt.stats.rx_occupancy[vl].Mean(b)));
          ps.stalled_series.push_back(static_cast<float>(pt.stats.credit_stalled[vl].Mean(b)));
        }
        for (int c = 0; c < pt.classes; ++c)
          ps.high_water_blocks = std::max(ps.high_water_blocks, pt.rx[pt.Slot(vl, c)].high_water);
        ps.tx_fecn = pt.stats.tx_fecn[vl];
        ps.tx_becn = pt.stats.tx_becn[vl];
        // Port-wide counters are reported on VL 0's row.
        if (vl == 0) {
          ps.tx_bytes = pt.stats.tx_bytes;
          ps.tx_packets = pt.stats.tx_packets;
          ps.tx_fc_packets = pt.stats.tx_fc_packets;
          ps.credit_violations = pt.stats.credit_violations;
          ps.dropped = pt.stats.dropped_no_route;
        }
        out.push_back(std::move(ps));
      }
    }
  }
  return out;
}

RunResult RunEmbedded(const scenario::Scenario& s, const RunOptions& o) {
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<Fabric> fab = BuildFabric(s);
  Fabric& f = *fab;
  engine::Partition part(NumLps(s));
  capture::PcapWriter pcap;
  std::unique_ptr<PcapTap> tap;
  if (!s.pcap.empty() && !pcap.Open(s.pcap))
    throw std::runtime_error(s.pcap + ": cannot create capture file");
  if (pcap.is_open() || o.tap) tap = std::make_unique<PcapTap>(&pcap, s.pcap_until, o.tap);
  for (auto& d : f.devices) {
    part.Add(d.get());
    if (tap) d->SetTap(tap.get());
  }
  if (f.side_band) part.Add(f.side_band.get());
  part.StartAll();
  // Run in slices so a long run can report progress; slicing does not change the event order.
  // A run that ends with its traces runs an interval at a time and stops after the first in
  // which every replayed application has finished.
  const int kSlices = s.end_with_traces ? s.bins() : 200;
  bool tty = o.progress && isatty(STDERR_FILENO);
  r.simulated = s.duration;
  for (int i = 1; i <= kSlices; ++i) {
    SimTime end =
        s.end_with_traces ? std::min(s.duration, s.interval * i) : s.duration * i / kSlices;
    part.RunUntil(end);
    if (s.end_with_traces && TracesDone(s, f.flows)) {
      r.simulated = end;
      break;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.progress && wall > 1.0 && (tty || i % 20 == 0)) {
      std::fprintf(stderr, "%s  %5.1f%%  t=%.3f ms  %llu events  %.1f Mev/s wall %.1fs%s",
                   tty ? "\r" : "", 100.0 * i / kSlices, static_cast<double>(end) / 1e9,
                   static_cast<unsigned long long>(part.events()), part.events() / wall / 1e6, wall,
                   tty ? "" : "\n");
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  if (r.simulated < s.duration) {
    scenario::Scenario cut = s;
    cut.duration = r.simulated;
    CollectResults(f, cut, part.events(), &r);
  } else {
    CollectResults(f, s, part.events(), &r);
  }
  r.pcap_packets = pcap.packets();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

void CollectResults(Fabric& f, const scenario::Scenario& s, uint64_t events, RunResult* r) {
  for (auto& d : f.devices) {
    d->FinishStats(s.duration);
    r->lp_digests.push_back(d->digest());
    for (int p = 1; p <= d->num_ports(); ++p) r->packet_hops += d->port(p).stats.tx_packets;
  }
  if (f.side_band) r->lp_digests.push_back(f.side_band->digest());
  r->digest = CombineDigests(r->lp_digests);
  r->ports = SummarizePorts(f, s);
  r->flows = std::move(f.flows);
  r->events = events;
  r->peak_rss_kb = PeakRssKb();
}

}  // namespace ibemu::fabric
