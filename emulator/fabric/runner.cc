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

uint64_t CombineDigests(const Fabric& f) {
  engine::Digest d;
  for (const auto& dev : f.devices)
    if (dev) d.Add(dev->digest());
  return d.value();
}

RunResult RunEmbedded(const scenario::Scenario& s, const RunOptions& o) {
  RunResult r;
  auto t0 = std::chrono::steady_clock::now();
  r.fabric = BuildFabric(s);
  Fabric& f = *r.fabric;
  engine::Partition part(f.devices.size());
  capture::PcapWriter pcap;
  std::unique_ptr<PcapTap> tap;
  if (!s.pcap.empty() && !pcap.Open(s.pcap))
    throw std::runtime_error(s.pcap + ": cannot create capture file");
  if (pcap.is_open() || o.tap) tap = std::make_unique<PcapTap>(&pcap, s.pcap_until, o.tap);
  for (auto& d : f.devices) {
    part.Add(d.get());
    if (tap) d->SetTap(tap.get());
  }
  part.StartAll();
  // Run in slices so a long run can report progress; slicing does not change the event order.
  const int kSlices = 200;
  bool tty = o.progress && isatty(STDERR_FILENO);
  for (int i = 1; i <= kSlices; ++i) {
    SimTime end = s.duration * i / kSlices;
    part.RunUntil(end);
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.progress && wall > 1.0 && (tty || i % 20 == 0)) {
      std::fprintf(stderr, "%s  %5.1f%%  t=%.3f ms  %llu events  %.1f Mev/s wall %.1fs%s",
                   tty ? "\r" : "", 100.0 * i / kSlices, static_cast<double>(end) / 1e9,
                   static_cast<unsigned long long>(part.events()), part.events() / wall / 1e6, wall,
                   tty ? "" : "\n");
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  for (auto& d : f.devices) {
    d->FinishStats(s.duration);
    for (int p = 1; p <= d->num_ports(); ++p) r.packet_hops += d->port(p).stats.tx_packets;
  }
  r.digest = CombineDigests(f);
  r.events = part.events();
  r.pcap_packets = pcap.packets();
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_rss_kb = PeakRssKb();
  return r;
}

}  // namespace ibemu::fabric
