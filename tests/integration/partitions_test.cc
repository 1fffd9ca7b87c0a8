// The same scenario gives the same event-trace digest and the same per-flow results in one
// process, in three processes, and with one process per device; a process that dies stops the
// run within seconds with a message naming it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include "tests/integration/cli_util.h"
#include "tests/integration/golden_digests.h"

namespace {

using ibemu::testing::CliResult;
using ibemu::testing::ReadFile;
using ibemu::testing::SpawnIbemu;
using ibemu::testing::TempDir;

CliResult Cli(const std::string& args) {
  return ibemu::testing::Ibemu(args);
}

std::string Line(const std::string& out, const std::string& prefix) {
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) return l;
  return "";
}

std::string Digest(const std::string& out) {
  std::string l = Line(out, "digest ");
  return l.substr(7, 16);
}

// The flow rows of the result table: every number must match across modes.
std::string FlowRows(const std::string& out) {
  std::string rows;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.size() > 1 && l[0] == 'F' && isdigit(static_cast<unsigned char>(l[1]))) rows += l + "\n";
  return rows;
}

// Every CC hook in use (marking at the switches, CNPs and BECN on ACKs, CCTI timers and gates at
// the CAs): the partitioned run is the same run, port counters included.
TEST(Partitions, IbCcMarkingAndThrottlingGiveOneDigestInOneAndThreeProcesses) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/tests/data/scenarios/cc_testbed_short.yaml";
  TempDir a("partitions-cc1"), b("partitions-cc3");
  CliResult one = Cli("run -q --no-plot " + scen + " -o " + a.path());
  CliResult three = Cli("run -q --no-plot " + scen + " -o " + b.path() + " --partitions 3");
  ASSERT_EQ(one.status, 0) << one.out;
  ASSERT_EQ(three.status, 0) << three.out;
  EXPECT_EQ(Digest(three.out), Digest(one.out));
  EXPECT_EQ(FlowRows(three.out), FlowRows(one.out));
  std::string ports = ReadFile(a.path() + "/ports.csv");
  EXPECT_EQ(ReadFile(b.path() + "/ports.csv"), ports);
  // S2's port to the hot spot marked packets (the tx_fecn column is not all zero).
  EXPECT_TRUE(std::regex_search(ports, std::regex("\\nS2,2,0,H5,[^\\n]*,[1-9][0-9]*,[0-9]+\\n")))
      << ports;
}

// The same run in one process, in three, and in one per device; each must succeed.
struct ThreeWays {
  CliResult one, three, each;
};
ThreeWays RunThreeWays(const std::string& common) {
  ThreeWays r{Cli(common), Cli(common + " --partitions 3"), Cli(common + " --per-device")};
  EXPECT_EQ(r.one.status, 0) << r.one.out;
  EXPECT_EQ(r.three.status, 0) << r.three.out;
  EXPECT_EQ(r.each.status, 0) << r.each.out;
  EXPECT_EQ(Digest(r.three.out), Digest(r.one.out));
  EXPECT_EQ(Digest(r.each.out), Digest(r.one.out));
  EXPECT_EQ(FlowRows(r.three.out), FlowRows(r.one.out));
  EXPECT_EQ(FlowRows(r.each.out), FlowRows(r.one.out));
  return r;
}

// The probe mechanism puts every hook to work: an extra queue and queue arbitration (H5, H6),
// control messages between neighbours (H5), timers, and the side band (H7), an LP that is not a
// node and talks to every device. One process, three, and one per device are the same run.
TEST(Partitions, EveryCcHookInUseGivesOneDigestInOneThreeAndPerDeviceProcesses) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/tests/data/scenarios/cc_probe_short.yaml";
  TempDir out("partitions-probe");
  ThreeWays r = RunThreeWays("run -q --no-plot --duration 2ms " + scen + " -o " + out.path());
  const CliResult &one = r.one, &each = r.each;
  auto counts = [](const std::string& l) { return l.substr(0, l.find("  wall")); };
  EXPECT_EQ(counts(Line(each.out, "events ")), counts(Line(one.out, "events ")));
  // The hooks did something: without the mechanism the run is another.
  TempDir plain("partitions-probe-none");
  std::string none = ReadFile(scen);
  none.replace(none.find("mechanism: probe"), 16, "mechanism: none ");
  none.replace(none.find("  parameters:"), none.find("traffic:") - none.find("  parameters:"), "");
  none.replace(none.find("../../../configs"), 16, std::string(IBEMU_SOURCE_DIR) + "/configs");
  std::ofstream(plain.path() + "/none.yaml") << none;
  CliResult n =
      Cli("run -q --no-plot --duration 2ms " + plain.path() + "/none.yaml -o " + plain.path());
  ASSERT_EQ(n.status, 0) << n.out;
  EXPECT_NE(Digest(n.out), Digest(one.out));
}

// Runs a scenario (a path under the source tree) for `duration` in one process and in three:
// the same digest, the same flow rows, the same latency series.
void ExpectSameRunInOneAndThreeProcesses(const std::string& rel, const std::string& duration) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/" + rel;
  TempDir a("partitions-one"), b("partitions-three");
  std::string common = "run -q --no-plot --duration " + duration + " " + scen + " -o ";
  CliResult one = Cli(common + a.path()), three = Cli(common + b.path() + " --partitions 3");
  ASSERT_EQ(one.status, 0) << one.out;
  ASSERT_EQ(three.status, 0) << three.out;
  EXPECT_EQ(Digest(three.out), Digest(one.out));
  EXPECT_EQ(FlowRows(three.out), FlowRows(one.out));
  EXPECT_EQ(Line(three.out, "trace "), Line(one.out, "trace "));
  std::string latency = ReadFile(a.path() + "/flow_latency.csv");
  EXPECT_FALSE(latency.empty());
  EXPECT_EQ(ReadFile(b.path() + "/flow_latency.csv"), latency);
}

// Santos et al.'s mechanism (input-buffer marking, per-packet ACKs, windows and IPD gates). S-B5
// marks from its first milliseconds.
TEST(Partitions, SantosGivesOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("configs/scenarios/santos/s-b5-proposed.yaml", "5ms");
}

// MVCM on the CIOQ switch (output buffers, MB at inputs, VB at outputs, per-packet ACKs carrying
// both bits, windows and waiting slots), on a small 4-ary 2-fly with a hot spot from 50 us.
TEST(Partitions, MvcmOnCioqSwitchesGivesOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("tests/data/scenarios/mvcm_partitions.yaml", "300us");
}

// A replayed application: its ranks on two partitions learn of each other's messages only from
// the packets, and the execution time is the same.
TEST(Partitions, ATraceReplayGivesOneDigestAndExecutionTimeInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("tests/data/scenarios/trace_hol.yaml", "1ms");
}

// Self-tuned throttling: the side band's samples and estimates (H7), the hosts' global gates and
// the hill climbing, on the 16x16 torus with its dateline VLs.
TEST(Partitions, SelfTunedGivesOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("configs/scenarios/selftuned/torus-uniform-tune.yaml",
                                      "60us");
}

// DDBBM in the paper's form: the destinations' notices (GMPs), the sources' per-message queues
// and every switch choosing VLs from the header (SwitchCc::OutputVl); and VOQsw with static
// buffer shares, whose credit classes look ahead at the next switch's route.
TEST(Partitions, DdbbmAndLookAheadCreditClassesGiveOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("configs/scenarios/dbbm/2b-ddbbm5-paper.yaml", "300us");
  ExpectSameRunInOneAndThreeProcesses("configs/scenarios/dbbm/2b-voqsw-static.yaml", "300us");
}

// CCFIT: CFQs with heads moved by post-processing (SwitchCc::HeadQueue), Stop/Go and releases as
// control messages between switches and to the hosts, queues held by PickQueue, marking and IB
// CC's throttling behind the Stop gates; four trees from 100 to 400 us.
TEST(Partitions, CcfitGivesOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("tests/data/scenarios/ccfit_partitions.yaml", "600us");
}

// EcoCC: VOQ switches with a read port per queue, roots at the VOQs, HPQs allocated by
// notifications, Stop/Go at HTh/LTh, marking with IB's root test and IB CC at the hosts; four
// trees from 100 to 400 us.
TEST(Partitions, EcoccOnMultiReadPortSwitchesGivesOneDigestInOneAndThreeProcesses) {
  ExpectSameRunInOneAndThreeProcesses("tests/data/scenarios/ecocc_partitions.yaml", "600us");
}

TEST(Partitions, Scenario1HasOneDigestInOneProcessThreeProcessesAndOneProcessPerDevice) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/configs/scenarios/testbed-scenario1.yaml";
  TempDir out("partitions");
  ThreeWays r = RunThreeWays("run -q --no-plot " + scen + " -o " + out.path());
  const CliResult &one = r.one, &three = r.three, &each = r.each;
  EXPECT_EQ(Digest(one.out), ibemu::testing::GoldenFor("TestBedScenario1").digest) << one.out;
  EXPECT_NE(Line(three.out, "digest ").find("(partitioned, 3 processes)"), std::string::npos);
  EXPECT_NE(Line(each.out, "digest ").find("(per-device, 9 processes)"), std::string::npos);
  // The same events were handled: the counts before the wall-time figure agree.
  auto counts = [](const std::string& l) { return l.substr(0, l.find("  wall")); };
  EXPECT_EQ(counts(Line(three.out, "events ")), counts(Line(one.out, "events ")));
  EXPECT_EQ(counts(Line(each.out, "events ")), counts(Line(one.out, "events ")));
}

TEST(Partitions, TcpTransportGivesTheSameDigest) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/configs/scenarios/fig2_4.yaml";
  TempDir out("partitions-tcp");
  std::string common = "run -q --no-plot " + scen + " -o " + out.path() + " --duration 300us";
  CliResult one = Cli(common);
  CliResult tcp = Cli(common + " --partitions 2 --transport tcp");
  ASSERT_EQ(tcp.status, 0) << tcp.out;
  EXPECT_EQ(Digest(tcp.out), Digest(one.out));
}

// Processes started by hand (as on other hosts), bound on different loopback addresses.
TEST(Partitions, ProcessesStartedElsewhereJoinOverTcpAndGiveTheSameDigest) {
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/configs/scenarios/fig2_4.yaml";
  TempDir tmp("spawn-none");
  std::string one =
      Digest(Cli("run -q --no-plot " + scen + " -o " + tmp.path() + " --duration 300us").out);
  std::string log = tmp / "launcher.log";
  pid_t launcher =
      SpawnIbemu({"run", "-q", "--no-plot", scen, "-o", tmp.path(), "--duration", "300us",
                  "--partitions", "2", "--transport", "tcp", "--spawn", "none"},
                 log);
  std::string endpoint;
  for (int i = 0; i < 100 && endpoint.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(log);
    for (std::string l; std::getline(in, l);) {
      size_t p = l.find("--launcher ");
      if (p != std::string::npos) endpoint = l.substr(p + 11, l.find(' ', p + 11) - p - 11);
    }
  }
  ASSERT_FALSE(endpoint.empty()) << "the launcher printed no worker command";
  std::vector<pid_t> workers;
  for (int k = 0; k < 2; ++k) {
    workers.push_back(SpawnIbemu({"worker", "--launcher", endpoint, "--partition",
                                  std::to_string(k), "--bind", "127.0.0." + std::to_string(k + 2)},
                                 ""));
  }
  int st = 0;
  waitpid(launcher, &st, 0);
  for (pid_t w : workers) waitpid(w, nullptr, 0);
  std::ifstream in(log);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << text;
  EXPECT_EQ(Digest(text), one) << text;
}

bool HaveMpirun() {
  return ibemu::testing::Shell("command -v mpirun").status == 0;
}

std::string Mpirun(int np, const std::string& args) {
  return "mpirun --allow-run-as-root --oversubscribe -np " + std::to_string(np) + " " +
         IBEMU_BINARY + " " + args;
}

// An existing launcher starts the processes: `ibemu plan` writes which rank runs which device,
// mpirun starts four ranks of `ibemu rank`, and the links between them go over tcp://. Same
// digest, flows and port counters as one process; the plan can be launched again; a launch with
// the wrong number of ranks is refused, naming the plan and the count.
TEST(Partitions, MpirunStartsThePlannedRanksOverTcpAndTheyGiveTheOneProcessDigest) {
  if (!HaveMpirun()) GTEST_SKIP() << "mpirun is not installed (scripts/install-deps.sh)";
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/tests/data/scenarios/cc_testbed_short.yaml";
  TempDir tmp("mpirun-plan");
  CliResult one = Cli("run -q --no-plot " + scen + " -o " + (tmp / "one"));
  ASSERT_EQ(one.status, 0) << one.out;
  CliResult plan = Cli("plan " + scen + " --partitions 4 -o " + (tmp / "plan"));
  ASSERT_EQ(plan.status, 0) << plan.out;
  EXPECT_NE(plan.out.find("mpirun -np 4 ibemu rank"), std::string::npos) << plan.out;
  for (const char* run : {"four", "again"}) {
    CliResult four = ibemu::testing::Shell(
        Mpirun(4, "rank " + (tmp / "plan") + " --bind 127.0.0.1 -q --no-plot -o " + (tmp / run)));
    ASSERT_EQ(four.status, 0) << four.out;
    EXPECT_NE(four.out.find("(partitioned, 4 processes)"), std::string::npos) << four.out;
    EXPECT_EQ(Digest(four.out), Digest(one.out)) << four.out;
    EXPECT_EQ(FlowRows(four.out), FlowRows(one.out));
    EXPECT_EQ(ReadFile(tmp / (std::string(run) + "/ports.csv")), ReadFile(tmp / "one/ports.csv"));
  }
  CliResult three = ibemu::testing::Shell(Mpirun(3, "rank " + (tmp / "plan") + " -q"));
  EXPECT_NE(three.status, 0);
  EXPECT_NE(three.out.find("plan.yaml has 4 partitions; the launcher started 3 ranks"),
            std::string::npos)
      << three.out;
  CliResult alone = Cli("rank " + (tmp / "plan"));
  EXPECT_EQ(alone.status, 2);
  EXPECT_NE(alone.out.find("started by a launcher"), std::string::npos) << alone.out;
  // A damaged plan is refused naming its file, line and field.
  std::string text = ReadFile(tmp / "plan/plan.yaml");
  size_t at = text.find("lp_partition: [0");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 16, "lp_partition: [7");
  std::filesystem::create_directories(tmp / "bad");
  std::ofstream(tmp / "bad/plan.yaml") << text;
  CliResult bad = ibemu::testing::Shell("OMPI_COMM_WORLD_RANK=0 " + std::string(IBEMU_BINARY) +
                                        " rank " + (tmp / "bad"));
  EXPECT_EQ(bad.status, 2);
  EXPECT_TRUE(std::regex_search(
      bad.out, std::regex("bad/plan.yaml:[0-9]+: lp_partition\\[0\\]: 7 is not a partition")))
      << bad.out;
}

// The children of `pid` now, from /proc (pgrep -P would do, but this needs no procps).
std::vector<pid_t> ChildrenOf(pid_t pid) {
  std::vector<pid_t> kids;
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t k; in >> k;) kids.push_back(k);
  return kids;
}

// The largest virtual time (ms) a progress line in `text` shows, or -1.
double ProgressMs(const std::string& text) {
  double best = -1;
  std::regex re("t=([0-9.]+) ms");
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end; ++it)
    best = std::max(best, std::stod((*it)[1]));
  return best;
}

TEST(Partitions, AKilledProcessStopsTheRunWithAMessageNamingIt) {
  std::string scen =
      std::string(IBEMU_SOURCE_DIR) + "/configs/scenarios/testbed-scenario1-full.yaml";
  // Processes of the run that outlive the launcher are re-parented to this test, not to init, so
  // the test can see them (and reap them) instead of losing track of them.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  TempDir tmp("kill");
  std::string log = tmp / "launcher.log";
  pid_t launcher =
      SpawnIbemu({"run", "--no-plot", scen, "-o", tmp / "out", "--partitions", "2"}, log);
  // Kill a worker once the run is going: both workers exist and virtual time has advanced.
  std::vector<pid_t> workers;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until &&
         (workers.size() < 2 || ProgressMs(ReadFile(log)) <= 0)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    workers = ChildrenOf(launcher);
  }
  ASSERT_EQ(workers.size(), 2u) << "the launcher did not start two workers\n" << ReadFile(log);
  ASSERT_GT(ProgressMs(ReadFile(log)), 0) << "the run did not get going\n" << ReadFile(log);
  kill(workers[0], SIGKILL);
  auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  pid_t done = 0;
  while ((done = waitpid(launcher, &st, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(15))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (done == 0) {
    kill(launcher, SIGKILL);
    waitpid(launcher, &st, 0);
    for (pid_t w : workers) kill(w, SIGKILL);
    FAIL() << "the launcher did not stop within 15 s of a worker dying";
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 5.0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 2);
  std::string text = ReadFile(log);
  EXPECT_NE(text.find("was killed by signal 9"), std::string::npos) << text;
  EXPECT_NE(text.find("emulator process for partition"), std::string::npos) << text;
  EXPECT_NE(text.find("devices "), std::string::npos) << text;
  // No process of the run is left behind: the launcher reaped both workers before it exited, so
  // neither is a child of this test now (a survivor would have been re-parented here).
  for (pid_t w : workers) {
    pid_t r = waitpid(w, nullptr, WNOHANG);
    EXPECT_TRUE(r < 0 && errno == ECHILD) << "worker " << w << " outlived the launcher";
    if (r == 0) kill(w, SIGKILL);
  }
}

}  // namespace
