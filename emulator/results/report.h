// Turns a finished run into what a user reads: a table on stdout, CSV and JSON files, and a PNG
// plot of per-flow throughput over time.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "emulator/fabric/runner.h"
#include "emulator/scenario/scenario.h"

namespace ibemu::results {

struct FlowSummary {
  std::string name;
  double rx_gbps = 0;  // payload delivered in the measurement window
  double tx_gbps = 0;
  double p50_us = 0, p99_us = 0, max_us = 0, mean_us = 0;
  uint64_t rx_packets = 0;
  uint64_t rx_fecn = 0;  // of those, the ones that arrived marked (FECN)
};

std::vector<FlowSummary> Summarize(const scenario::Scenario& s, const fabric::RunResult& r);
void PrintTable(const scenario::Scenario& s, const fabric::RunResult& r, std::ostream& out);
// Writes flows.csv, ports.csv, summary.json and (if enabled and gnuplot exists) throughput.png
// into `dir`. Returns the files written.
std::vector<std::string> WriteOutputs(const scenario::Scenario& s, const fabric::RunResult& r,
                                      const std::string& dir, std::ostream& log);

}  // namespace ibemu::results
