// Shared by the integration tests: load a scenario from configs/, optionally adjust it, run it on
// the embedded fabric and summarise the flows by name.
#pragma once
#include <functional>
#include <map>
#include <string>

#include "emulator/fabric/runner.h"
#include "emulator/results/report.h"
#include "emulator/scenario/scenario.h"

namespace ibemu::testing {

inline std::string SourcePath(const std::string& rel) {
  return std::string(IBEMU_SOURCE_DIR) + "/" + rel;
}

struct Outcome {
  scenario::Scenario scenario;
  fabric::RunResult run;
  std::map<std::string, results::FlowSummary> flows;
};

inline Outcome RunScenario(const std::string& rel,
                           const std::function<void(scenario::Scenario&)>& adjust = {},
                           link::PacketTap* tap = nullptr) {
  Outcome o;
  o.scenario = scenario::LoadScenario(SourcePath(rel));
  o.scenario.plot = false;
  if (adjust) adjust(o.scenario);
  fabric::RunOptions opt;
  opt.tap = tap;
  o.run = fabric::RunEmbedded(o.scenario, opt);
  for (const auto& f : results::Summarize(o.scenario, o.run)) o.flows[f.name] = f;
  return o;
}

// The execution time of the application a scenario replays (flow 0, docs/traces.md), after
// checking that all `ranks` of it finished.
inline link::SimTime TraceExecution(const Outcome& o, uint64_t ranks) {
  const stats::FlowStats& f = o.run.flows.flows[0];
  EXPECT_EQ(f.ranks_done, ranks) << o.scenario.name << ": the replay did not finish";
  return f.finish;
}

// Every port of every device: no packet arrived without credits, no FC packet disagreed with the
// receiver's count. Failures name the port.
inline std::string CreditViolations(const fabric::RunResult& r) {
  std::string bad;
  for (const auto& p : r.ports)
    if (p.credit_violations) bad += p.device + "[" + std::to_string(p.port) + "] ";
  return bad;
}

}  // namespace ibemu::testing
