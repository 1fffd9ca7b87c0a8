// `ibemu up` keeps a fabric running in paced virtual time until `ibemu down`; `ibemu status`
// reports virtual time that follows wall time at the stated pace.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "tests/integration/cli_util.h"

namespace {

std::string Capture(const std::string& args, int* status) {
  ibemu::testing::CliResult r = ibemu::testing::Ibemu(args);
  *status = r.status;
  return r.out;
}

// The virtual and wall seconds `ibemu status` printed; false when the line is not there.
bool StatusTimes(const std::string& status, double* virtual_s, double* wall_s) {
  std::smatch m;
  static const std::regex re("virtual time ([0-9.]+) s after ([0-9.]+) s");
  if (!std::regex_search(status, m, re)) return false;
  *virtual_s = std::stod(m[1]);
  *wall_s = std::stod(m[2]);
  return true;
}

double VirtualSeconds(const std::string& status) {
  double v, w;
  return StatusTimes(status, &v, &w) ? v : -1;
}

TEST(FabricUp, PacedFabricFollowsWallTimeAndComesDownWithResults) {
  std::string name = "uptest" + std::to_string(getpid());
  char tmpl[] = "/tmp/ibemu-up-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string out = std::string(tmpl) + "/results";
  setenv("IBEMU_RUN_DIR", tmpl, 1);
  std::string scen = std::string(IBEMU_SOURCE_DIR) + "/configs/scenarios/fig2_4.yaml";
  pid_t pid = ibemu::testing::SpawnIbemu(
      {"up", scen, "--name", name, "--pace", "0.0001", "-q", "-o", out}, "");
  int st = 0;
  std::string s1 = Capture("status --wait 30 --name " + name, &st);
  ASSERT_EQ(st, 0) << s1;
  auto t1 = std::chrono::steady_clock::now();
  double v1 = VirtualSeconds(s1);
  // Not a wait for a condition: the wall interval over which the pace is measured.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::string s2 = Capture("status --name " + name, &st);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  double v2 = VirtualSeconds(s2);
  ASSERT_GE(v1, 0) << s1;
  ASSERT_GE(v2, 0) << s2;
  // 1e-4 virtual seconds per wall second, within the slice granularity and scheduling noise.
  EXPECT_NEAR((v2 - v1) / wall, 1e-4, 0.3e-4) << s1 << s2;
  EXPECT_EQ(s2.find("behind"), std::string::npos) << s2;

  std::string again = Capture("up " + scen + " --name " + name, &st);
  EXPECT_EQ(st, 2);
  EXPECT_NE(again.find("already up"), std::string::npos) << again;

  std::string down = Capture("down --name " + name, &st);
  EXPECT_EQ(st, 0) << down;
  // `down` returned, so the process has ended: it can be reaped without waiting.
  int ust = 0;
  ASSERT_EQ(waitpid(pid, &ust, WNOHANG), pid);
  EXPECT_TRUE(WIFEXITED(ust) && WEXITSTATUS(ust) == 0);
  EXPECT_TRUE(std::filesystem::exists(out + "/flows.csv"));
  EXPECT_TRUE(std::filesystem::exists(out + "/summary.json"));
  std::string gone = Capture("status --name " + name, &st);
  EXPECT_EQ(st, 2);
  EXPECT_NE(gone.find("no fabric named"), std::string::npos) << gone;
  std::filesystem::remove_all(tmpl);
}

// An idle fabric (a topology, no traffic, no SM) sleeps until it is asked something instead of
// waking every slice; its clock still follows the wall: a request that wakes it sees the virtual
// time the wall's time says, within a slice, however long it slept.
TEST(FabricUp, IdleFabricKeepsItsClockWithTheWall) {
  std::string name = "idletest" + std::to_string(getpid());
  char tmpl[] = "/tmp/ibemu-up-test-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  setenv("IBEMU_RUN_DIR", tmpl, 1);
  std::string topo = std::string(IBEMU_SOURCE_DIR) + "/configs/topologies/testbed.topo";
  pid_t pid = ibemu::testing::SpawnIbemu(
      {"up", topo, "--name", name, "--sm", "external", "-q", "-o", std::string(tmpl) + "/r"}, "");
  int st = 0;
  std::string s0 = Capture("status --wait 30 --name " + name, &st);
  ASSERT_EQ(st, 0) << s0;
  // The service loop is the process's main thread: its voluntary context switches are its
  // wake-ups (CPU load adds involuntary ones only).
  auto wakeups = [&] {
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) return std::stol(line.substr(24));
    return -1L;
  };
  const long w0 = wakeups();
  ASSERT_GE(w0, 0);
  // Several looks at times unrelated to the fabric's own wake-ups (kIdleWait, 100 ms): a clock
  // that moved only when the loop woke would be up to that far behind.
  for (int i = 0; i < 5; ++i) {
    SCOPED_TRACE(i);
    // Not a wait for a condition: idle time for the fabric to sleep through.
    std::this_thread::sleep_for(std::chrono::milliseconds(230));
    std::string s = Capture("status --name " + name, &st);
    double virtual_s, wall_s;
    ASSERT_TRUE(StatusTimes(s, &virtual_s, &wall_s)) << s;
    // Pace 1: virtual seconds equal wall seconds, the virtual time at most a slice (1 ms)
    // behind; the rest is slack for a loaded machine. A clock moved only when the loop woke
    // would be up to kIdleWait (100 ms) behind: within this in under a third of the looks.
    EXPECT_NEAR(virtual_s, wall_s, 0.03) << s;
  }
  // About 1.2 s idle and five requests: some 12 wake-ups of kIdleWait and 5 for the requests
  // (every 1 ms slice, it was some 1,200).
  EXPECT_LT(wakeups() - w0, 100);
  Capture("down --name " + name, &st);
  EXPECT_EQ(st, 0);
  int ust = 0;
  waitpid(pid, &ust, 0);
  std::filesystem::remove_all(tmpl);
}

}  // namespace
