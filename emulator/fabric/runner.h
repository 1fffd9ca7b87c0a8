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

// What a port did over the run, per VL: the same numbers whichever process ran the device.
struct PortSummary {
  std::string device, peer;
  int port = 0, vl = 0;
  double mean_occupancy_blocks = 0;
  uint32_t high_water_blocks = 0;
  double credit_stalled_fraction = 0;
  uint64_t tx_bytes = 0, tx_packets = 0, tx_fc_packets = 0, credit_violations = 0, dropped = 0;
  uint64_t tx_fecn = 0, tx_becn = 0;  // packets sent on this VL with FECN, BECN
  // Per interval: mean receive-buffer occupancy (blocks) and the fraction of the interval the
  // port's transmitter waited for credits on this VL.
  std::vector<float> occupancy_series, stalled_series;
};

struct RunResult {
  stats::FlowTable flows;
  std::vector<PortSummary> ports;    // in device order, then port, then VL
  std::vector<uint64_t> lp_digests;  // [LP id]
  std::string mode = "embedded";
  int partitions = 1;
  uint64_t digest = 0;
  uint64_t events = 0;
  uint64_t packet_hops = 0;  // data packets put on a link, summed over all links
  uint64_t pcap_packets = 0;
  link::SimTime simulated = 0;  // virtual time run: the duration, or less (run.end: traces)
  double wall_seconds = 0;
  long peak_rss_kb = 0;  // the largest of the processes
  // Partitioned runs: event frames, their bytes and batches sent between processes.
  uint64_t cross_frames = 0, cross_frame_bytes = 0, cross_batches = 0;
  struct ProcessStats {
    uint32_t partition;
    uint64_t events;
    double run_s, wait_s, setup_s;
  };
  std::vector<ProcessStats> process_stats;  // partitioned runs, in the order results arrived
};

RunResult RunEmbedded(const scenario::Scenario& s, const RunOptions& o);

// Digest of a run: the LPs' digests combined in LP order.
uint64_t CombineDigests(const std::vector<uint64_t>& lp_digests);
// Ends a one-process run of every device in `f`: brings statistics up to s.duration and fills
// the digests, packet-hops, port summaries, flows, event count and memory of `r`.
void CollectResults(Fabric& f, const scenario::Scenario& s, uint64_t events, RunResult* r);
// The port summaries of the devices built in `f` (those a partition ran).
std::vector<PortSummary> SummarizePorts(const Fabric& f, const scenario::Scenario& s);
long PeakRssKb();

}  // namespace ibemu::fabric
