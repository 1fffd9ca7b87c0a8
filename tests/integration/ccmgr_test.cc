// ibemu-ccmgr, the congestion-control manager, on a fabric that is up: it programs every switch
// and CA from its own policy or from an opensm.conf, and the unmodified Debian ibccquery reads
// back what the policy says; a change made live through its CLI shows in the next packets (the
// switch's marking stops and restarts); a MAD with a wrong CC_Key is refused and counted; a CA
// whose link comes up later is programmed too; its export holds the congestion events and the
// per-port marking rates; a bad policy is refused with file, line and key, and a bad policy
// applied to a running manager leaves it as it was.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

const std::string kCcmgr = IBEMU_CCMGR_BINARY;
const std::string kKey = "0xc0ffe";  // configs/ccmgr/paper3.yaml's CC_Key

class Ccmgr : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
    if (!HaveTool("ibccquery") || !HaveTool("ibccconfig"))
      GTEST_SKIP() << "infiniband-diags is needed";
  }
  // Starts the manager on `port` and waits until its first sweep has programmed `ccas` CCAs.
  bool Start(const UpFabric& f, const std::string& port, const std::string& args, int ccas) {
    mgr_.log = f.dir() + "/ccmgr.log";
    mgr_.pid = f.SpawnExec(port, kCcmgr + " run --name " + f.name() + " " + args, mgr_.log);
    return WaitForLine(mgr_.log, "programmed " + std::to_string(ccas) + " CCAs", 30);
  }
  CliResult Cli(const UpFabric& f, const std::string& args) {
    return Shell(kCcmgr + " " + args + " --name " + f.name());
  }
  SmProcess mgr_;
};

TEST_F(Ccmgr, ProgramsFromItsPolicyChangesLiveRefusesAWrongKeyAndExportsTheMarking) {
  UpFabric f(Src("configs/scenarios/testbed-scenario1-ccmgr.yaml"), {"--pace", "0.05"});
  ASSERT_TRUE(f.ready());
  const std::string exp = f.dir() + "/export";
  ASSERT_TRUE(Start(
      f, "H1:1",
      "--policy " + Src("configs/ccmgr/paper3.yaml") + " --export " + exp + " --sweep 1 --poll 100",
      9))
      << mgr_.Log();
  EXPECT_NE(mgr_.Log().find("programmed 9 CCAs, 9 verified"), std::string::npos) << mgr_.Log();
  int64_t s1 = DumpField(f.Exec("H1:1", "smpquery -D portinfo 0,1 0").out, "Lid");
  int64_t s2 = DumpField(f.Exec("H4:1", "smpquery -D portinfo 0,1 0").out, "Lid");
  int64_t h5 = DumpField(f.Exec("H5:1", "smpquery -D portinfo 0").out, "Lid");
  ASSERT_GT(s1, 0);
  ASSERT_GT(s2, 0);
  ASSERT_GT(h5, 0);
  auto query = [&](const std::string& what, int64_t lid) {
    return f.Exec("H2:1", "ibccquery -c " + kKey + " " + what + " " + std::to_string(lid)).out;
  };
  // What the policy says, read back by the Debian tool.
  std::string ss = query("SS", s2);
  EXPECT_EQ(DumpField(ss, "Control_Map"), 0x1d) << ss;
  EXPECT_EQ(DumpField(ss, "Threshold"), 15) << ss;
  EXPECT_EQ(DumpField(ss, "Packet_Size"), 8) << ss;
  EXPECT_EQ(DumpField(ss, "Marking_Rate"), 1) << ss;
  // The masks as ibccquery prints them: 64 hex digits, bit n = port n (S1's is the override).
  auto mask = [](const std::string& out) {
    std::smatch m;
    return std::regex_search(out, m, std::regex("Victim_Mask:\\.+([0-9a-f]{64})\n"))
               ? m[1].str()
               : std::string();
  };
  EXPECT_EQ(mask(ss), std::string(62, '0') + "1e") << ss;
  EXPECT_EQ(mask(query("SS", s1)), std::string(62, '0') + "0e") << query("SS", s1);
  std::string cs = query("CS", h5);
  EXPECT_EQ(DumpField(cs, "Control_Map"), 1) << cs;
  EXPECT_EQ(DumpField(cs, "CCTI_Timer"), 150) << cs;
  EXPECT_EQ(DumpField(cs, "CCTI_Increase"), 1) << cs;
  std::string ct = query("CT", h5);
  EXPECT_EQ(DumpField(ct, "CCTI_Limit"), 127) << ct;
  EXPECT_NE(ct.find("Entry:...........................42\nCCT_Shift:.......................0\n"
                    "CCT_Multiplier:..................1099"),
            std::string::npos)
      << ct;  // block 0 of the quadratic table: 7000 * 42^2 / 106^2
  std::string ck = query("CK", s2);
  EXPECT_EQ(DumpField(ck, "CC_Key"), 0xc0ffe) << ck;
  EXPECT_EQ(DumpField(ck, "CC_KeyProtectBit"), 1) << ck;

  // A live change through the CLI shows in the next packets: S2 stops marking at Threshold 0.
  auto marks = [&] { return DumpField(query("CongestionLog", s2), "LogEventsCounter"); };
  ASSERT_TRUE(f.WaitForVirtualTime(0.090, 60));  // all five flows run from 80 ms
  int64_t a = marks();
  ASSERT_TRUE(f.WaitForVirtualTime(f.VirtualTime() + 0.005));
  EXPECT_NE(marks(), a) << "S2 does not mark with the hot spot running";
  CliResult off = Cli(f, "set --node S2 cc_sw_cong_setting_threshold 0");
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_NE(off.out.find("verified"), std::string::npos) << off.out;
  EXPECT_EQ(DumpField(query("SS", s2), "Threshold"), 0);
  int64_t c = marks();
  ASSERT_TRUE(f.WaitForVirtualTime(f.VirtualTime() + 0.010));
  EXPECT_EQ(marks(), c) << "S2 still marks with Threshold 0";
  EXPECT_EQ(DumpField(query("SS", s1), "Threshold"), 15) << "the change was for S2 only";
  ASSERT_EQ(Cli(f, "set --node S2 cc_sw_cong_setting_threshold 15").status, 0);
  int64_t d = marks();
  ASSERT_TRUE(f.WaitForVirtualTime(f.VirtualTime() + 0.010));
  EXPECT_NE(marks(), d) << "S2 does not mark again with Threshold 15";

  // A wrong CC_Key: the Set is refused (no answer), the setting stays, the violation is counted
  // and the manager sees it.
  CliResult bad =
      f.Exec("H3:1", "ibccconfig -c 0x1 SS " + std::to_string(s2) + " 0x4 0 0 0 8 0 0:0 1");
  EXPECT_NE(bad.status, 0) << bad.out;
  EXPECT_EQ(DumpField(query("SS", s2), "Threshold"), 15);
  CliResult show = Cli(f, "show S2 --json");
  ASSERT_EQ(show.status, 0) << show.out;
  nlohmann::json j = nlohmann::json::parse(show.out);
  ASSERT_EQ(j["nodes"].size(), 1u) << show.out;
  EXPECT_GE(j["nodes"][0]["cc_key_violations"].get<int>(), 1) << show.out;
  EXPECT_EQ(j["nodes"][0]["threshold"].get<int>(), 15) << show.out;
  EXPECT_TRUE(WaitForLine(mgr_.log, "CC_Key violations at S2", 10)) << mgr_.Log();
  // ... and S2 trapped it to the manager, which set its TrapLID: who tried what with which key.
  EXPECT_TRUE(WaitForLine(
      mgr_.log,
      "Bad CC_Key trap from S2: LID " +
          std::to_string(DumpField(f.Exec("H3:1", "smpquery -D portinfo 0").out, "Lid")) +
          " QP 1 tried method 0x02 on attribute 0x0014 (modifier 0) with "
          "CC_Key 0x1",
      10))
      << mgr_.Log();
  nlohmann::json st = nlohmann::json::parse(Cli(f, "status --json").out);
  EXPECT_GE(std::stoll(st.value("traps", "0")), 1) << st.dump();  // protobuf's JSON: uint64 as text
  EXPECT_GE(std::stoll(st.value("key_violations", "0")), 1) << st.dump();

  // A second manager of the same name is refused while this one runs.
  CliResult second =
      Shell(kCcmgr + " run --name " + f.name() + " --policy " + Src("configs/ccmgr/paper3.yaml"));
  EXPECT_EQ(second.status, 2) << second.out;
  EXPECT_NE(second.out.find("is already running"), std::string::npos) << second.out;

  // A bad policy applied live is refused, naming file, line and key; nothing changes.
  CliResult refused = Cli(f, "apply " + Src("tests/data/ccmgr/out_of_range.yaml"));
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.out.find("out_of_range.yaml:3: cc_sw_cong_setting_threshold: 16 is out of "
                             "range (0..15)"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(DumpField(query("SS", s2), "Threshold"), 15);
  CliResult odd = Cli(f, "apply " + Src("tests/data/ccmgr/list_key.yaml"));
  EXPECT_EQ(odd.status, 2) << odd.out;
  EXPECT_NE(odd.out.find("list_key.yaml:2: "), std::string::npos) << odd.out;
  EXPECT_EQ(Cli(f, "status").status, 0) << "the manager did not survive a malformed policy";

  // The events as they happen, and the export once the manager stops.
  CliResult log = Cli(f, "log");
  EXPECT_NE(log.out.find("S2       port 2   marked  SLID"), std::string::npos) << log.out;
  mgr_.Stop();
  EXPECT_GT(ReadFile(exp + "/events.csv").size(), 1000u);
  nlohmann::json summary = nlohmann::json::parse(ReadFile(exp + "/summary.json"));
  double hot = 0;
  size_t points = 0;
  for (const auto& p : summary["marking"])
    if (p["node"] == "S2" && p["port"] == 2) {
      hot = p["rate_per_s"].get<double>();
      points = p["series"].size();
    }
  EXPECT_GT(hot, 1000) << summary.dump(2);  // H5's port on S2 marks thousands of times a second
  EXPECT_GT(points, 3u) << "the rate over time, one point per poll";
  EXPECT_TRUE(fs::exists(exp + "/marking.png"));
}

TEST_F(Ccmgr, ProgramsFromAnOpenSmConfAndProgramsACaWhoseLinkComesUpLater) {
  if (!HaveTool("smpquery")) GTEST_SKIP() << "infiniband-diags is needed";
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  ASSERT_TRUE(f.ready());
  SmProcess sm;
  sm.log = f.dir() + "/fabricmgr.log";
  sm.pid = f.SpawnExec("H1:1", std::string(IBEMU_FABRICMGR_BINARY) + " run --sweep 1", sm.log);
  ASSERT_TRUE(WaitForLine(sm.log, "SUBNET UP", 30)) << sm.Log();
  ASSERT_EQ(f.Link("H7:1", "down").status, 0);
  ASSERT_TRUE(Start(f, "H2:1",
                    "--policy " + Src("configs/ccmgr/opensm-cc.conf") + " --sweep 0.5 --poll 0", 8))
      << mgr_.Log();
  EXPECT_EQ(Cli(f, "show").out.find("H7"), std::string::npos);
  ASSERT_EQ(f.Link("H7:1", "up").status, 0);
  // The SM brings the port back to Active; the manager's next sweep finds and programs it.
  EXPECT_TRUE(WaitForLine(mgr_.log, "found H7 port 1", 30)) << mgr_.Log() << sm.Log();
  EXPECT_TRUE(PollFor([&] {
    std::string h7 = Cli(f, "show H7").out;
    return h7.find("H7 port 1 (LID") != std::string::npos &&
           h7.find("): verified") != std::string::npos;
  })) << Cli(f, "show").out
      << mgr_.Log();
  int64_t h7 = DumpField(f.Exec("H7:1", "smpquery -D portinfo 0").out, "Lid");
  ASSERT_GT(h7, 0);
  std::string ct = f.Exec("H1:1", "ibccquery CT " + std::to_string(h7)).out;
  EXPECT_EQ(DumpField(ct, "CCTI_Limit"), 15) << ct;  // the opensm.conf's 16-entry cc_cct
  std::string cs = f.Exec("H1:1", "ibccquery CS " + std::to_string(h7)).out;
  EXPECT_EQ(DumpField(cs, "CCTI_Timer"), 150) << cs;
  EXPECT_EQ(DumpField(cs, "CCTI_Increase"), 1) << cs;
  EXPECT_EQ(DumpField(cs, "Control_Map"), 1) << cs;
  EXPECT_NE(ct.find("Entry:...........................15\nCCT_Shift:.......................0\n"
                    "CCT_Multiplier:..................140"),
            std::string::npos)
      << ct;
  // The switches, as the opensm.conf's switch options say (programmed at the start).
  int64_t s2 = DumpField(f.Exec("H4:1", "smpquery -D portinfo 0,1 0").out, "Lid");
  ASSERT_GT(s2, 0);
  std::string ss = f.Exec("H1:1", "ibccquery SS " + std::to_string(s2)).out;
  EXPECT_EQ(DumpField(ss, "Control_Map"), 0x1d) << ss;
  EXPECT_EQ(DumpField(ss, "Threshold"), 15) << ss;
  EXPECT_EQ(DumpField(ss, "Packet_Size"), 8) << ss;
  EXPECT_EQ(DumpField(ss, "Marking_Rate"), 1) << ss;
}

TEST_F(Ccmgr, ABadPolicyIsRefusedBeforeAnythingStarts) {
  CliResult r =
      Shell(kCcmgr + " run --name nobody --policy " + Src("tests/data/ccmgr/unknown_key.yaml"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown_key.yaml:3: cc_threshold: unknown key"), std::string::npos)
      << r.out;
  CliResult none = Shell(kCcmgr + " status --name nobody");
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.out.find("no ibemu-ccmgr named 'nobody' is running"), std::string::npos)
      << none.out;
}

}  // namespace
}  // namespace ibemu::testing
