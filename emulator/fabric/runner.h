// Runs a scenario. The embedded runner holds every LP in one partition; the partitioned runners
// (processes over ZeroMQ) produce the same per-LP event order and therefore the same digest.
#pragma once
#include <memory>
#include <string>

#include "emulator/fabric/fabric.h"
#include "emulator/scenario/scenario.h"

namespace ibemu::fabric {

struct RunOptions {
  bool progress = false;     // a progress line on stderr for runs longer than a second of wall time
  PacketTap* tap = nullptr;  // sees what the capture sees (same packets, same time window)
};

struct RunResult {
  std::unique_ptr<Fabric> fabric;
  uint64_t digest = 0;
  uint64_t events = 0;
  uint64_t packet_hops = 0;  // data packets put on a link, summed over all links
  uint64_t pcap_packets = 0;
  double wall_seconds = 0;
  long peak_rss_kb = 0;
};

RunResult RunEmbedded(const scenario::Scenario& s, const RunOptions& o);

// Digest of a run: the LPs' digests combined in LP order.
uint64_t CombineDigests(const Fabric& f);
long PeakRssKb();

}  // namespace ibemu::fabric
