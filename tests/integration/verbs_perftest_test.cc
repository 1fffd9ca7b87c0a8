// Must-show 3 of the verbs host library, first part: Debian's perftest, unmodified, between two
// emulated HCAs after OpenSM: ib_send_bw, ib_write_bw, ib_read_bw, ib_atomic_bw, ib_send_lat,
// ib_write_lat and ib_read_lat complete on both sides and print their result line. They use the
// extended QP API (ibv_create_qp_ex, ibv_wr_*), unsignaled completions in batches, inline data,
// RDMA READ and atomics, and the SEND tests load libibumad and libibverbs into one process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <thread>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

class VerbsPerftest : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibverbs";
#endif
    if (!HaveTool("ib_write_bw") || !HaveTool("opensm"))
      GTEST_SKIP() << "perftest and opensm are not installed (scripts/install-deps.sh)";
  }
};

TEST_F(VerbsPerftest, EveryBandwidthAndLatencyTestCompletesAndReports) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  ASSERT_TRUE(f.ready());
  SmProcess sm;
  sm.pid = StartOpenSm(f);
  ASSERT_GT(sm.pid, 0) << "OpenSM did not bring the subnet up";
  for (std::string prog : {"ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw", "ib_send_lat",
                           "ib_write_lat", "ib_read_lat"}) {
    SCOPED_TRACE(prog);
    std::string port = FreeTcpPort();
    std::string args = " -n 100 -p " + port;
    std::string log = f.dir() + "/" + prog + ".server.log";
    pid_t server = f.SpawnOnHca("H1", "stdbuf -oL " + prog + args, log);
    ASSERT_TRUE(WaitForLine(log, "Waiting for client", 20)) << ReadFile(log);
    CliResult client = f.ExecOnHca("H3", prog + args + " localhost", 120);
    int st = 0;
    EXPECT_TRUE(WaitForExit(server, 60, &st)) << client.out;
    std::string out = ReadFile(log);
    EXPECT_EQ(client.status, 0) << client.out;
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    // The result line: size, iterations, then the figures (bandwidth or latency).
    std::regex result(prog.find("_lat") != std::string::npos
                          ? "\\n\\s*[0-9]+\\s+100\\s+[0-9.]+\\s+[0-9.]+"
                          : "\\n\\s*[0-9]+\\s+100\\s+[0-9.]+\\s+[0-9.]+\\s+[0-9.]+");
    EXPECT_TRUE(std::regex_search(client.out, result)) << client.out;
    EXPECT_EQ(client.out.find("Couldn't"), std::string::npos) << client.out;
    EXPECT_EQ(client.out.find("Completion with error"), std::string::npos) << client.out;
  }
}

// Must-show 3, second part: ib_write_bw from H3 to H1 on the idle test bed, then with a
// saturating synthetic flow H2 -> H1 (configs/scenarios/verbs-under-load.yaml) sharing S1's output
// to H1. Both fabrics run at pace 0.001, slow enough for the emulator to keep up, so what perftest
// measures in wall time is the virtual bandwidth times the pace: about 2 MB/s for the idle 4x DDR
// link (2 GB/s of data), and half of it when the switch shares the link round robin with the
// synthetic flow, as it would on hardware.
TEST_F(VerbsPerftest, IbWriteBwUnderSyntheticLoadGetsHalfTheLink) {
  auto measure = [&](const std::string& config) -> double {
    UpFabric f(Src(config), {"--pace", "0.001"});
    EXPECT_TRUE(f.ready());
    std::string port = FreeTcpPort();
    std::string args = " -n 20 -p " + port;
    std::string log = f.dir() + "/server.log";
    pid_t server = f.SpawnOnHca("H1", "stdbuf -oL ib_write_bw" + args, log);
    EXPECT_TRUE(WaitForLine(log, "Waiting for client", 20)) << ReadFile(log);
    CliResult client = f.ExecOnHca("H3", "ib_write_bw" + args + " localhost", 120);
    EXPECT_TRUE(WaitForExit(server, 60)) << client.out;
    EXPECT_EQ(client.status, 0) << client.out;
    std::smatch m;
    if (!std::regex_search(client.out, m,
                           std::regex("\\n\\s*65536\\s+20\\s+([0-9.]+)\\s+([0-9.]+)"))) {
      ADD_FAILURE() << client.out;
      return 0;
    }
    return std::stod(m[2]);  // BW average, MB/s of wall time
  };
  double idle = measure("configs/topologies/testbed.topo");
  double loaded = measure("configs/scenarios/verbs-under-load.yaml");
  // 4x DDR carries 16 Gbit/s of data: 2000 MB/s of virtual time, 2 MB/s of wall time here; the
  // message headers and ACK round trips take a little of it.
  EXPECT_GT(idle, 1.6);
  EXPECT_LT(idle, 2.05);
  EXPECT_GT(loaded / idle, 0.40) << "idle " << idle << " MB/s, loaded " << loaded << " MB/s";
  EXPECT_LT(loaded / idle, 0.60) << "idle " << idle << " MB/s, loaded " << loaded << " MB/s";
}

// Must-show 4, the link case: ib_write_bw streaming from H3 to H1 when H3's cable is pulled
// (`ibemu link`). The requester's ACK timeouts run out (perftest's timeout 14, 7 retries: about
// half a second of virtual time) and the job ends with "Failed status 12" (retry exceeded) on the
// client and an error exit on both sides: no hang.
TEST_F(VerbsPerftest, ALinkTakenDownMidTransferEndsTheJobWithRetryExceeded) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  std::string port = FreeTcpPort();
  std::string args = " -n 1000000 -p " + port;
  std::string slog = f.dir() + "/server.log", clog = f.dir() + "/client.log";
  pid_t server = f.SpawnOnHca("H1", "stdbuf -oL ib_write_bw" + args, slog);
  ASSERT_TRUE(WaitForLine(slog, "Waiting for client", 20)) << ReadFile(slog);
  pid_t client = f.SpawnOnHca("H3", "stdbuf -oL ib_write_bw" + args + " localhost", clog);
  ASSERT_TRUE(WaitForLine(clog, "#bytes", 20)) << ReadFile(clog);  // streaming now
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CliResult down = f.Link("H3:1", "down");
  ASSERT_EQ(down.status, 0) << down.out;
  auto exited = [](pid_t pid, int* st) {
    for (int i = 0; i < 300; ++i) {
      if (waitpid(pid, st, WNOHANG) == pid) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    kill(pid, SIGKILL);
    waitpid(pid, st, 0);
    return false;
  };
  int cst = 0, sst = 0;
  EXPECT_TRUE(exited(client, &cst)) << "the client hung: " << ReadFile(clog);
  EXPECT_TRUE(exited(server, &sst)) << "the server hung: " << ReadFile(slog);
  std::string out = ReadFile(clog);
  EXPECT_TRUE(WIFEXITED(cst) && WEXITSTATUS(cst) != 0) << out;
  EXPECT_NE(out.find("Failed status 12"), std::string::npos) << out;
}

// Must-show 4, a transient loss: ib_read_bw and ib_atomic_bw from H3 to H1 while H3's cable is
// pulled for 20 ms and put back. Requests and responses in flight are lost; the requester's ACK
// timer (perftest's timeout 14, 67 ms) sends the outstanding requests again, and the responder
// answers a duplicate READ by reading again and a duplicate atomic with the result it had (IBA
// 9.7.5.1.1), so every work request completes and both sides finish cleanly.
TEST_F(VerbsPerftest, ALinkDownBrieflyMidTransferLosesNoWorkRequest) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  for (std::string prog : {"ib_read_bw", "ib_atomic_bw"}) {
    SCOPED_TRACE(prog);
    std::string port = FreeTcpPort();
    std::string args = " -n 20000 -p " + port;
    std::string slog = f.dir() + "/" + prog + ".server.log",
                clog = f.dir() + "/" + prog + ".client.log";
    pid_t server = f.SpawnOnHca("H1", "stdbuf -oL " + prog + args, slog);
    ASSERT_TRUE(WaitForLine(slog, "Waiting for client", 20)) << ReadFile(slog);
    pid_t client = f.SpawnOnHca("H3", "stdbuf -oL " + prog + args + " localhost", clog);
    ASSERT_TRUE(WaitForLine(clog, "#bytes", 20)) << ReadFile(clog);  // streaming now
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_EQ(f.Link("H3:1", "down").status, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(f.Link("H3:1", "up").status, 0);
    int cst = 0, sst = 0;
    for (int i = 0; i < 600 && waitpid(client, &cst, WNOHANG) != client; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (kill(client, 0) == 0) {
      kill(client, SIGKILL);
      waitpid(client, &cst, 0);
      ADD_FAILURE() << "the client hung: " << ReadFile(clog);
    }
    waitpid(server, &sst, 0);
    std::string out = ReadFile(clog);
    EXPECT_TRUE(WIFEXITED(cst) && WEXITSTATUS(cst) == 0) << out;
    EXPECT_TRUE(WIFEXITED(sst) && WEXITSTATUS(sst) == 0) << ReadFile(slog);
    EXPECT_EQ(out.find("Failed status"), std::string::npos) << out;
    EXPECT_TRUE(std::regex_search(out, std::regex("\\n\\s*[0-9]+\\s+20000\\s+[0-9.]+"))) << out;
  }
}

}  // namespace
}  // namespace ibemu::testing
