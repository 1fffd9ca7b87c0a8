// What any subnet manager must do for synthetic traffic on a fabric brought up with `--sm
// external`, run once with Debian's OpenSM and once with ibemu-fabricmgr: the flow waits until
// the SM has activated the ports and given the destination a LID, then goes where the LFTs the SM
// wrote send it (ibroute and the switch port counters). A link taken down during the run makes
// the switch trap (128) to the SM, which reroutes; the flow resumes on the other root and
// ibnetdiscover loses the cable; brought back up, the link trains again (fresh flow control, no
// credit errors) and the SM activates it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

// One subnet manager as the tests start it: the line its log shows on SUBNET UP is the same for
// both; the line that shows it received a LinkStateChange trap is its own.
struct SmKind {
  std::string name;
  std::string tool;       // what must be installed besides infiniband-diags
  std::string trap_line;  // in its log once trap 128 has arrived
};

void PrintTo(const SmKind& k, std::ostream* os) {
  *os << k.name;
}

const SmKind kOpenSm{"OpenSM", "opensm", "num:128"};
const SmKind kFabricMgr{"FabricMgr", IBEMU_FABRICMGR_BINARY, "trap 128 from"};

class SubnetManager : public ::testing::TestWithParam<SmKind> {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
    if (!HaveTool(GetParam().tool) || !HaveTool("perfquery") || !HaveTool("ibroute"))
      GTEST_SKIP() << GetParam().tool << " and infiniband-diags are needed";
  }
  // Starts the SM on `port` with light sweeps every `sweep` seconds; whether it reached SUBNET UP.
  bool Start(const UpFabric& f, const std::string& port, int sweep) {
    if (GetParam().name == kOpenSm.name) {
      sm_.log = f.dir() + "/opensm.log";
      sm_.pid = StartOpenSm(f, port, sweep);
      return sm_.pid > 0;
    }
    sm_.log = f.dir() + "/fabricmgr.log";
    sm_.pid = f.SpawnExec(port, GetParam().tool + " run --sweep " + std::to_string(sweep), sm_.log);
    return WaitForLine(sm_.log, "SUBNET UP", 30);
  }
  void Stop() {
    sm_.Stop();
  }
  std::string Log() const {
    return sm_.Log();
  }

  SmProcess sm_;
};

int CountPortLines(const std::string& discovery) {
  int n = 0;
  std::istringstream in(discovery);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] == '[') ++n;
  return n;
}

// Every port of the results: no packet arrived without credits.
void ExpectNoCreditViolations(const UpFabric& f) {
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  ASSERT_TRUE(j.contains("ports")) << "no results in " << f.dir();
  for (const auto& p : j["ports"]) EXPECT_EQ(p.value("credit_violations", 0), 0) << p.dump();
}

TEST_P(SubnetManager, FlowFollowsTheLidsAndRoutesItProgrammed) {
  UpFabric f(Src("tests/data/scenarios/sm_traffic.yaml"), {});
  ASSERT_TRUE(f.ready());
  // Before the SM: no LID, the port waits in Init.
  CliResult before = f.Exec("H1:1", "smpquery -D portinfo 0");
  EXPECT_EQ(DumpField(before.out, "Lid"), 0) << before.out;
  EXPECT_NE(before.out.find("LinkState:.......................Initialize"), std::string::npos)
      << before.out;
  ASSERT_TRUE(Start(f, "H7:1", 10)) << "no SUBNET UP:\n" << Log();  // off the flow's path
  int64_t h5 = -1;
  ASSERT_TRUE(PollFor([&] {
    return (h5 = DumpField(f.Exec("H5:1", "smpquery -D portinfo 0").out, "Lid")) > 0;
  })) << "H5 has no LID after SUBNET UP";
  // S1 sends H5's LID to S2 (port 4).
  CliResult route = f.Exec("H1:1", "ibroute -D 0,1");
  EXPECT_EQ(RoutePort(route.out, h5), 4) << route.out;
  // S1 port 4 (to S2) carries the flow: 2048-byte payload packets are 2074 octets on the wire,
  // 518 words; at least 50 of them must show. S1 port 3 (to H3) sees only the SM's MADs.
  std::string s1 =
      std::to_string(DumpField(f.Exec("H1:1", "smpquery -D portinfo 0,1 0").out, "Lid"));
  auto xmit = [&](int port) {
    return DumpField(f.Exec("H1:1", "perfquery -x " + s1 + " " + std::to_string(port)).out,
                     "PortXmitData");
  };
  int64_t trunk = 0;
  EXPECT_TRUE(PollFor([&] { return (trunk = xmit(4)) >= 518 * 50; }))
      << "S1 port 4 sent " << trunk << " words: the flow did not get through";
  int64_t side = xmit(3);
  EXPECT_LT(side, 518 * 10) << "S1 port 3 carried data";
  Stop();
  f.Down();
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  EXPECT_GT(j["flows"][0]["rx_packets"].get<int64_t>(), 50) << "the flow was not received";
}

TEST_P(SubnetManager, ReroutesAroundALinkTakenDownAndActivatesItAgain) {
  UpFabric f(Src("tests/data/scenarios/link_down.yaml"), {});
  ASSERT_TRUE(f.ready());
  ASSERT_TRUE(Start(f, "H4:1", 1)) << "no SUBNET UP:\n" << Log();
  int64_t h3 = -1;
  ASSERT_TRUE(PollFor([&] {
    return (h3 = DumpField(f.Exec("H3:1", "smpquery -D portinfo 0").out, "Lid")) > 0;
  })) << "H3 has no LID after SUBNET UP";
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
  EXPECT_TRUE(WaitForLine(sm_.log, GetParam().trap_line, 10)) << "no trap 128 at the SM\n" << Log();
  int after = -1;
  PollFor([&] { return (after = route_port()) == other; });
  EXPECT_EQ(after, other) << "H3's LID was not rerouted\n" << Log();
  // 0.3 virtual seconds of a 200 Mbit/s flow are 7.5 MB, 1.9 M words: well over a tenth of that
  // must show on the new path, and nothing more on the dead one.
  int64_t dead1 = xmit(before), alive1 = xmit(other);
  double now = f.VirtualTime();
  ASSERT_GE(now, 0);
  ASSERT_TRUE(f.WaitForVirtualTime(now + 0.3)) << "the fabric's virtual time did not advance";
  int64_t dead2 = xmit(before), alive2 = xmit(other);
  EXPECT_EQ(dead2, dead1) << "the dead link still transmits";
  EXPECT_GT(alive2 - alive1, 180000) << "the flow did not resume on port " << other;
  // The cable is gone from a discovery (both of its ends' port lines).
  EXPECT_EQ(CountPortLines(f.Exec("H2:1", "ibnetdiscover").out), links_before - 2);

  CliResult up = f.Link("L1-S0:" + std::to_string(before), "up");
  ASSERT_EQ(up.status, 0) << up.out;
  EXPECT_TRUE(PollFor([&] { return PortActive(f, "H1:1", "0,1 " + std::to_string(before)); }))
      << "the SM did not activate the link again\n"
      << Log();
  EXPECT_EQ(CountPortLines(f.Exec("H2:1", "ibnetdiscover").out), links_before);
  Stop();
  f.Down();
  ExpectNoCreditViolations(f);
}

INSTANTIATE_TEST_SUITE_P(Sms, SubnetManager, ::testing::Values(kOpenSm, kFabricMgr),
                         [](const ::testing::TestParamInfo<SmKind>& i) { return i.param.name; });

}  // namespace
}  // namespace ibemu::testing
