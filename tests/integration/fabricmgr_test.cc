// ibemu-fabricmgr, our subnet manager, in place of OpenSM: started through `ibemu exec` on a
// fabric brought up with `--sm external`, it must reach SUBNET UP, and then the unmodified
// Debian tools must find what an SM leaves behind (LIDs on every CA, Active ports with the SM's
// LID, LFTs that route every CA, SMInfo MASTER), the LIDs must survive a restart, and DOR must
// program the dateline VL. What OpenSM and it must both do (traffic on their routes, rerouting
// around a link taken down) is subnet_manager_test.cc, run with each.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

const std::string kFabricMgr = IBEMU_FABRICMGR_BINARY;

class FabricMgr : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
    if (!HaveTool("ibnetdiscover") || !HaveTool("smpquery") || !HaveTool("sminfo"))
      GTEST_SKIP() << "infiniband-diags is not installed (scripts/install-deps.sh)";
  }

  // Starts the SM on `port` and waits for SUBNET UP; the log is <dir>/<log>.
  bool StartSm(const UpFabric& f, const std::string& port, const std::string& args,
               const std::string& log = "fabricmgr.log") {
    sm_.log = f.dir() + "/" + log;
    sm_.pid = f.SpawnExec(port, kFabricMgr + " run " + args, sm_.log);
    return WaitForLine(sm_.log, "SUBNET UP", 30);
  }
  void StopSm() {
    sm_.Stop();
  }
  std::string Log() const {
    return sm_.Log();
  }

  SmProcess sm_;
};

// Node name -> LID of its port 1, read through the node's own SMA by directed route.
std::map<std::string, int64_t> CaLids(const UpFabric& f, int hosts) {
  std::map<std::string, int64_t> lids;
  for (int h = 1; h <= hosts; ++h) {
    std::string node = "H" + std::to_string(h);
    lids[node] = DumpField(f.Exec(node + ":1", "smpquery -D portinfo 0").out, "Lid");
  }
  return lids;
}

TEST_F(FabricMgr, ConfiguresTheTestBedAsTheDebianToolsSeeIt) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  const std::string state = f.dir() + "/state";
  ASSERT_TRUE(StartSm(f, "H1:1", "--state-dir " + state + " --sweep 1")) << "no SUBNET UP:\n"
                                                                         << Log();

  // ibnetdiscover: every CA port has a LID, all different.
  std::string disc = f.Exec("H4:1", "ibnetdiscover").out;
  std::regex ca_port(R"(\[1\]\([0-9a-f]+\)\s+"S-[0-9a-f]+"\[\d+\]\s+# lid (\d+) lmc 0)");
  std::set<int> seen;
  for (std::sregex_iterator it(disc.begin(), disc.end(), ca_port), end; it != end; ++it)
    seen.insert(std::stoi((*it)[1]));
  EXPECT_EQ(seen.size(), 7u) << disc;
  EXPECT_EQ(seen.count(0), 0u) << disc;

  // smpquery: every CA port Active with our SM's LID; the switches too.
  std::map<std::string, int64_t> lids = CaLids(f, 7);
  int64_t sm_lid = lids["H1"];
  ASSERT_GT(sm_lid, 0);
  for (auto& [node, lid] : lids) {
    std::string pi = f.Exec(node + ":1", "smpquery -D portinfo 0").out;
    EXPECT_GT(lid, 0) << node;
    EXPECT_NE(pi.find("LinkState:.......................Active"), std::string::npos)
        << node << ":\n"
        << pi;
    EXPECT_EQ(DumpField(pi, "SMLid"), sm_lid) << node;
  }
  std::string s1_port0 = f.Exec("H1:1", "smpquery -D portinfo 0,1 0").out;
  EXPECT_GT(DumpField(s1_port0, "Lid"), 0) << s1_port0;
  EXPECT_EQ(DumpField(s1_port0, "SMLid"), sm_lid) << s1_port0;

  // ibroute (LID-routed, so the switches' LIDs and the LFTs on the way work): H1..H3 hang off
  // S1 ports 1..3, H4..H7 off S2 ports 1..4, and S1[4] - S2[5] joins them.
  int64_t s1 = DumpField(s1_port0, "Lid");
  int64_t s2 = DumpField(f.Exec("H4:1", "smpquery -D portinfo 0,1 0").out, "Lid");
  std::string r1 = f.Exec("H4:1", "ibroute " + std::to_string(s1)).out;
  std::string r2 = f.Exec("H1:1", "ibroute " + std::to_string(s2)).out;
  for (int h = 1; h <= 7; ++h) {
    int64_t lid = lids["H" + std::to_string(h)];
    EXPECT_EQ(RoutePort(r1, lid), h <= 3 ? h : 4) << "S1 -> H" << h << "\n" << r1;
    EXPECT_EQ(RoutePort(r2, lid), h <= 3 ? 5 : h - 3) << "S2 -> H" << h << "\n" << r2;
  }

  // sminfo asks the SM LID the port knows: our SM answers as master.
  std::string si = f.Exec("H6:1", "sminfo").out;
  EXPECT_NE(si.find("sm lid " + std::to_string(sm_lid) + " sm guid 0x2c90300000301"),
            std::string::npos)
      << si;
  EXPECT_NE(si.find("SMINFO_MASTER"), std::string::npos) << si;

  // The SM's port says IsSM while the daemon runs (the issm device is held open).
  std::string sm_pi = f.Exec("H4:1", "smpquery portinfo " + std::to_string(sm_lid)).out;
  EXPECT_NE(sm_pi.find("IsSM"), std::string::npos) << sm_pi;

  // The CLI asks the daemon.
  std::string env = "IBEMU_RUN_DIR=" + f.dir() + " ";
  CliResult nodes = Shell(env + kFabricMgr + " show nodes --name " + f.name());
  EXPECT_EQ(nodes.status, 0) << nodes.out;
  EXPECT_NE(nodes.out.find("subnet up"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("S2 Infiniscale-IV"), std::string::npos) << nodes.out;
  CliResult ports = Shell(env + kFabricMgr + " show ports --name " + f.name());
  EXPECT_EQ(ports.status, 0) << ports.out;
  int active = 0;
  for (size_t at = 0; (at = ports.out.find(" Active ", at)) != std::string::npos; ++at) ++active;
  EXPECT_EQ(active, 2 + 16) << ports.out;  // switch ports 0, and both ends of 8 cables
  CliResult routes = Shell(env + kFabricMgr + " show routes S2 --name " + f.name() + " --json");
  ASSERT_EQ(routes.status, 0) << routes.out;
  nlohmann::json rj = nlohmann::json::parse(routes.out, nullptr, false);
  ASSERT_FALSE(rj.is_discarded()) << routes.out;
  ASSERT_EQ(rj["routes"].size(), 1u);
  EXPECT_EQ(rj["routes"][0]["entries"].size(), 9u) << routes.out;
  CliResult bad = Shell(env + kFabricMgr + " show routes H1 --name " + f.name());
  EXPECT_EQ(bad.status, 2) << bad.out;

  // A second daemon of the same name is refused; a restart keeps every LID.
  CliResult twice = Shell("IBEMU_RUN_DIR=" + f.dir() + " " + IBEMU_BINARY + " exec --name " +
                          f.name() + " --port H2:1 -- " + kFabricMgr + " run");
  EXPECT_EQ(twice.status, 2) << twice.out;
  EXPECT_NE(twice.out.find("already running"), std::string::npos) << twice.out;
  StopSm();
  EXPECT_TRUE(fs::exists(state + "/guid2lid"));
  ASSERT_TRUE(StartSm(f, "H1:1", "--state-dir " + state, "fabricmgr2.log")) << Log();
  EXPECT_EQ(CaLids(f, 7), lids);
  EXPECT_NE(Log().find("0 to (re)assign"), std::string::npos) << Log();
}

TEST_F(FabricMgr, LidsComeBackFromTheStateDirOnAFreshFabric) {
  // On a fabric that was brought down and up again, the ports have lost their LIDs: only the
  // GUID-to-LID table can give them back. The SM starts on another port this time, so a
  // discovery-order assignment would differ.
  TempDir tmp("fabricmgr-state");
  const std::string state = tmp / "state";
  std::map<std::string, int64_t> first;
  {
    UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
    ASSERT_TRUE(StartSm(f, "H1:1", "--state-dir " + state)) << Log();
    first = CaLids(f, 7);
    StopSm();
  }
  {
    UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
    EXPECT_EQ(DumpField(f.Exec("H7:1", "smpquery -D portinfo 0").out, "Lid"), 0);
    ASSERT_TRUE(StartSm(f, "H7:1", "--state-dir " + state)) << Log();
    EXPECT_EQ(CaLids(f, 7), first);
    StopSm();
  }
}

TEST_F(FabricMgr, DorOnATorusProgramsTheDatelineVlAndFlowsGetThrough) {
  UpFabric f(Src("tests/data/scenarios/torus_dor.yaml"), {});
  ASSERT_TRUE(StartSm(f, "H1.1-1:1", "--config " + Src("configs/fabricmgr/torus-dor.yaml")))
      << Log();
  EXPECT_NE(Log().find("engine dor"), std::string::npos) << Log();
  // S3.0 reaches H0.0-1 across the dateline of dimension 0: SL 1.
  CliResult routes = Shell("IBEMU_RUN_DIR=" + f.dir() + " " + kFabricMgr + " show routes S3.0 " +
                           "--json --name " + f.name());
  nlohmann::json rj = nlohmann::json::parse(routes.out, nullptr, false);
  ASSERT_FALSE(rj.is_discarded()) << routes.out;
  int sl = -1;
  for (const auto& e : rj["routes"][0]["entries"])
    if (e["dest"] == "H0.0-1[1]") sl = e["sl"].get<int>();
  EXPECT_EQ(sl, 1) << routes.out;
  // S1.1's + port of dimension 0 (port 3): odd SLs on VL1, even ones on VL0.
  std::string table = f.Exec("H1.1-1:1", "smpquery -D sl2vl 0,1 3").out;
  EXPECT_NE(table.find("ports: in  1, out  3: | 0| 1| 0| 1|"), std::string::npos) << table;
  // Long enough for each 200 Mbit/s flow to deliver well over 50 packets (12 per virtual ms).
  double now = f.VirtualTime();
  ASSERT_GE(now, 0);
  ASSERT_TRUE(f.WaitForVirtualTime(now + 0.05)) << "the fabric's virtual time did not advance";
  StopSm();
  f.Down();
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  for (const auto& flow : j["flows"])
    EXPECT_GT(flow["rx_packets"].get<int64_t>(), 50) << flow.dump();
}

}  // namespace
}  // namespace ibemu::testing
