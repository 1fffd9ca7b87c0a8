// Trace replay (docs/traces.md): a replayed application's execution time is its messages' times
// and its compute gaps, and what the fabric does to its messages shows in it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/integration/run_util.h"

namespace ibemu::testing {
namespace {

using link::SimTime;
constexpr SimTime kUs = link::kPsPerUs;

// The replay's execution time (ps): when its last rank finished (it starts at 0).
SimTime Execution(const Outcome& o) {
  return TraceExecution(o, 2);
}

// Every rank's compute gaps set to `gap` (the same program otherwise).
void SetComputeGaps(scenario::Scenario& s, SimTime gap) {
  for (auto& [node, sources] : s.sources)
    for (hca::TrafficSource& t : sources) {
      if (!t.trace) continue;
      auto p = std::make_shared<hca::TraceProgram>(*t.trace);
      for (auto& ops : p->ranks)
        for (hca::TraceOp& op : ops)
          if (op.kind == hca::TraceOp::kCompute) op.value = static_cast<uint64_t>(gap);
      t.trace = p;
    }
}

TEST(Trace, APingPongTakesSixOneWayTimesPlusItsComputeGap) {
  SimTime with_gap = Execution(RunScenario("tests/data/scenarios/trace_pingpong.yaml"));
  SimTime no_gap = Execution(RunScenario("tests/data/scenarios/trace_pingpong.yaml",
                                         [](scenario::Scenario& s) { SetComputeGaps(s, 0); }));
  SimTime long_gap =
      Execution(RunScenario("tests/data/scenarios/trace_pingpong.yaml",
                            [](scenario::Scenario& s) { SetComputeGaps(s, 100 * kUs); }));
  // A gap delays everything after it by its length: the fabric is idle meanwhile. Without one,
  // rank 0's next message waits behind the ACK of the one it just received (RC), up to 100 ns.
  EXPECT_EQ(long_gap - with_gap, 90 * kUs);
  EXPECT_LE(with_gap - no_gap, 10 * kUs);
  EXPECT_GE(with_gap - no_gap, 10 * kUs - 100 * link::kPsPerNs);
  // Six 64 KB messages one after another, each at least its time on a 16 Gbit/s host link
  // (32.77 us) and, with nothing else in the fabric, within 10 % of it.
  double one_way = 65536 * 8 / 16e9 * 1e12;
  EXPECT_GE(static_cast<double>(no_gap), 6 * one_way);
  EXPECT_LE(static_cast<double>(no_gap), 6 * one_way * 1.10);
}

TEST(Trace, HolBlockingSlowsTheReplayAndVoqnetGivesItsTimeBack) {
  SimTime alone = Execution(RunScenario("tests/data/scenarios/trace_pingpong.yaml"));
  // The ping-pong's S1->S2 link is shared with H2's flow into the hot spot H5.
  SimTime voqsw = Execution(RunScenario("tests/data/scenarios/trace_hol.yaml"));
  SimTime voqnet =
      Execution(RunScenario("tests/data/scenarios/trace_hol.yaml",
                            [](scenario::Scenario& s) { s.queuing = "queuing.voqnet"; }));
  EXPECT_GT(voqsw, alone * 3 / 2);  // 392 us against 213
  EXPECT_LT(voqnet, alone * 21 / 20);
}

TEST(Trace, ARunThatEndsWithItsTracesStopsInTheIntervalTheLastRankFinished) {
  Outcome o = RunScenario("tests/data/scenarios/trace_hol.yaml", [](scenario::Scenario& s) {
    s.end_with_traces = true;
    s.interval = 10 * kUs;
  });
  SimTime finish = Execution(o);
  EXPECT_GT(o.run.simulated, finish);
  EXPECT_LE(o.run.simulated, finish + 10 * kUs);
  EXPECT_EQ(o.run.simulated % (10 * kUs), 0);
}

}  // namespace
}  // namespace ibemu::testing
