// A link taken down during a run: the switch traps (128) to OpenSM, OpenSM sweeps and reroutes,
// the flow resumes on the other root, and ibnetdiscover no longer shows the cable. Brought back
// up, the link trains again (fresh flow control, no credit errors) and OpenSM activates it.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

int CountPortLines(const std::string& discovery) {
  int n = 0;
  std::istringstream in(discovery);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '[') ++n;
  return n;
}

TEST(LinkDown, SmReroutesAndTrafficResumesOnTheOtherPath) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
  if (!HaveTool("opensm") || !HaveTool("perfquery")) GTEST_SKIP() << "opensm/infiniband-diags";
  UpFabric f(Src("tests/data/scenarios/link_down.yaml"), {});
  pid_t sm = StartOpenSm(f, "H4:1", 1);
  ASSERT_GT(sm, 0) << "opensm never reached SUBNET UP";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t h3 = DumpField(f.Exec("H3:1", "smpquery -D portinfo 0").out, "Lid");
  std::string leaf =
      std::to_string(DumpField(f.Exec("H1:1", "smpquery -D portinfo 0,1 0").out, "Lid"));  // L1-S0
  auto route_port = [&] { return RoutePort(f.Exec("H1:1", "ibroute -D 0,1").out, h3); };
  auto xmit = [&](int port) {
    return DumpField(f.Exec("H1:1", "perfquery -x " + leaf + " " + std::to_string(port)).out,
                     "PortXmitData");
  };
  int before = route_port();
  ASSERT_TRUE(before == 3 || before == 4) << "H1's leaf sends H3's LID up port " << before;
  int other = 7 - before;
  int links_before = CountPortLines(f.Exec("H2:1", "ibnetdiscover").out);

  CliResult down = f.Link("L1-S0:" + std::to_string(before), "down");
  ASSERT_EQ(down.status, 0) << down.out;
  EXPECT_TRUE(WaitForLine(f.dir() + "/opensm.log", "num:128", 10)) << "no trap 128 at the SM";
  int after = -1;
  PollFor([&] { return (after = route_port()) == other; });
  EXPECT_EQ(after, other) << "OpenSM did not reroute H3's LID";
  int64_t dead1 = xmit(before), alive1 = xmit(other);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int64_t dead2 = xmit(before), alive2 = xmit(other);
  EXPECT_EQ(dead2, dead1) << "the dead link still transmits";
  // 200 Mbit/s for 0.3 s is 7.5 MB, 1.9 M words; well over a tenth of that must show.
  EXPECT_GT(alive2 - alive1, 180000) << "the flow did not resume on port " << other;
  // The cable is gone from a discovery (both of its ends' port lines).
  EXPECT_EQ(CountPortLines(f.Exec("H2:1", "ibnetdiscover").out), links_before - 2);

  CliResult up = f.Link("L1-S0:" + std::to_string(before), "up");
  ASSERT_EQ(up.status, 0) << up.out;
  EXPECT_TRUE(PollFor([&] { return PortActive(f, "H1:1", "0,1 " + std::to_string(before)); }))
      << "OpenSM did not activate the link again";
  EXPECT_EQ(CountPortLines(f.Exec("H2:1", "ibnetdiscover").out), links_before);
  StopProcess(sm);
  f.Down();
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  for (const auto& p : j["ports"]) EXPECT_EQ(p.value("credit_violations", 0), 0) << p.dump();
}

}  // namespace
}  // namespace ibemu::testing
