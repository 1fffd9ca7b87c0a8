// Synthetic traffic on a fabric configured by an unmodified OpenSM: the flow waits until the SM
// has activated the ports and given the destination a LID, then goes where the LFTs OpenSM wrote
// send it, which ibroute shows and the switch port counters confirm.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

TEST(SmTraffic, FlowFollowsTheLidsAndRoutesOpenSmProgrammed) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
  if (!HaveTool("opensm") || !HaveTool("perfquery")) GTEST_SKIP() << "opensm/infiniband-diags";
  UpFabric f(Src("tests/data/scenarios/sm_traffic.yaml"), {});
  // Before the SM: no LID, the port waits in Init.
  CliResult before = f.Exec("H1:1", "smpquery -D portinfo 0");
  EXPECT_EQ(DumpField(before.out, "Lid"), 0) << before.out;
  EXPECT_NE(before.out.find("LinkState:.......................Initialize"), std::string::npos)
      << before.out;
  pid_t sm = StartOpenSm(f, "H7:1");  // off the flow's path
  ASSERT_GT(sm, 0) << "opensm never reached SUBNET UP";
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CliResult h5 = f.Exec("H5:1", "smpquery -D portinfo 0");
  int64_t h5_lid = DumpField(h5.out, "Lid");
  ASSERT_GT(h5_lid, 0) << h5.out;
  CliResult route = f.Exec("H1:1", "ibroute -D 0,1");  // S1
  char want[32];
  std::snprintf(want, sizeof want, "0x%04llx 004", static_cast<long long>(h5_lid));
  EXPECT_NE(route.out.find(want), std::string::npos) << route.out;
  // S1 port 4 (to S2) carries the flow; S1 port 3 (to H3) only a few of the SM's MADs.
  CliResult s1 = f.Exec("H1:1", "smpquery -D portinfo 0,1 0");
  int64_t s1_lid = DumpField(s1.out, "Lid");
  CliResult trunk = f.Exec("H1:1", "perfquery -x " + std::to_string(s1_lid) + " 4");
  CliResult side = f.Exec("H1:1", "perfquery -x " + std::to_string(s1_lid) + " 3");
  StopProcess(sm);
  f.Down();
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  int64_t pkts = j["flows"][0]["rx_packets"].get<int64_t>();
  EXPECT_GT(pkts, 50) << "the flow did not get through";
  // 2048-byte payload packets: 2074 octets each on the wire, 518 words.
  EXPECT_GE(DumpField(trunk.out, "PortXmitData"), 518 * 50) << trunk.out;
  EXPECT_LT(DumpField(side.out, "PortXmitData"), 518 * 10) << side.out;
}

}  // namespace
}  // namespace ibemu::testing
