// Per-flow results, recorded where they happen (bytes at the receiving HCA, latency at delivery)
// and merged across partitions by summing, which is exact for integers.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "emulator/stats/binned.h"
#include "emulator/stats/latency_histogram.h"

namespace ibemu::stats {

struct FlowStats {
  BinnedCounter rx_payload;  // payload bytes delivered to the destination host, per interval
  BinnedCounter tx_payload;  // payload bytes injected by the source HCA, per interval
  LatencyHistogram latency;  // packet: creation at the source to delivery to the host
  uint64_t rx_packets = 0, tx_packets = 0, messages = 0;
  // The congestion-control mechanism's throttling level of the sending QP (IB CC: its CCTI),
  // summed over the data packets sent in each interval, and how many there were: their quotient
  // is the mean level the interval's packets left with. Kept for the flows of verbs QPs.
  BinnedCounter throttle_sum, throttle_samples;
  // Per interval, the synthetic data packets delivered, their latencies summed and the largest
  // (ps): a latency-over-time plot. And how many arrived with FECN set (marked on the way).
  BinnedCounter rx_count, latency_sum;
  BinnedMax latency_max;
  uint64_t rx_fecn = 0;
  // A replayed application's (docs/traces.md): its ranks that have finished, and when the last
  // of them did.
  uint64_t ranks_done = 0;
  SimTime finish = 0;

  void RankDone(SimTime now) {
    ++ranks_done;
    finish = std::max(finish, now);
  }
  // The per-interval counters (not the throttle ones, which only verbs flows keep).
  void InitBins(SimTime bin, int bins) {
    rx_payload.Init(bin, bins);
    tx_payload.Init(bin, bins);
    rx_count.Init(bin, bins);
    latency_sum.Init(bin, bins);
    latency_max.Init(bin, bins);
  }
  // A data packet delivered to the host at `now`, `delay` after its message was created.
  void Delivered(SimTime now, uint32_t payload, SimTime delay, bool fecn) {
    rx_payload.Add(now, payload);
    ++rx_packets;
    latency.Add(delay);
    rx_count.Add(now, 1);
    latency_sum.Add(now, delay);
    latency_max.Add(now, delay);
    rx_fecn += fecn;
  }

  void Merge(const FlowStats& o) {
    rx_payload.Merge(o.rx_payload);
    tx_payload.Merge(o.tx_payload);
    throttle_sum.Merge(o.throttle_sum);
    throttle_samples.Merge(o.throttle_samples);
    latency.Merge(o.latency);
    rx_count.Merge(o.rx_count);
    latency_sum.Merge(o.latency_sum);
    latency_max.Merge(o.latency_max);
    rx_fecn += o.rx_fecn;
    ranks_done += o.ranks_done;
    finish = std::max(finish, o.finish);
    rx_packets += o.rx_packets;
    tx_packets += o.tx_packets;
    messages += o.messages;
  }
};

struct FlowTable {
  std::vector<std::string> names;
  // What each flow is: empty for the scenario's (its traffic entry says), "H3->H1" for a QP's.
  std::vector<std::string> paths;
  std::vector<FlowStats> flows;
  SimTime interval = 0;
  int bins = 0;

  void Init(const std::vector<std::string>& n, SimTime bin, int nbins) {
    names = n;
    paths.assign(n.size(), {});
    interval = bin;
    bins = nbins;
    flows.assign(n.size(), {});
    for (auto& f : flows) f.InitBins(interval, bins);
  }
  // A flow that appears while the fabric runs: a verbs QP connected to its peer. Its index.
  uint32_t Add(const std::string& name, const std::string& path) {
    names.push_back(name);
    paths.push_back(path);
    FlowStats& f = flows.emplace_back();
    f.InitBins(interval, bins);
    f.throttle_sum.Init(interval, bins);
    f.throttle_samples.Init(interval, bins);
    return static_cast<uint32_t>(flows.size() - 1);
  }
};

}  // namespace ibemu::stats
