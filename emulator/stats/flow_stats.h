// Per-flow results, recorded where they happen (bytes at the receiving HCA, latency at delivery)
// and merged across partitions by summing, which is exact for integers.
#pragma once
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

  void Merge(const FlowStats& o) {
    rx_payload.Merge(o.rx_payload);
    tx_payload.Merge(o.tx_payload);
    latency.Merge(o.latency);
    rx_packets += o.rx_packets;
    tx_packets += o.tx_packets;
    messages += o.messages;
  }
};

struct FlowTable {
  std::vector<std::string> names;
  std::vector<FlowStats> flows;
  void Init(const std::vector<std::string>& n, SimTime interval, int bins) {
    names = n;
    flows.assign(n.size(), {});
    for (auto& f : flows) {
      f.rx_payload.Init(interval, bins);
      f.tx_payload.Init(interval, bins);
    }
  }
};

}  // namespace ibemu::stats
