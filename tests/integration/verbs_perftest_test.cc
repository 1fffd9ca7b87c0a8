// Must-show 3 of the verbs host library, first part: Debian's perftest, unmodified, between two
// emulated HCAs after OpenSM: ib_send_bw, ib_write_bw, ib_read_bw, ib_atomic_bw, ib_send_lat,
// ib_write_lat and ib_read_lat complete on both sides and print their result line. They use the
// extended QP API (ibv_create_qp_ex, ibv_wr_*), unsignaled completions in batches, inline data,
// RDMA READ and atomics, and the SEND tests load libibumad and libibverbs into one process.
#include <gtest/gtest.h>
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
  int run = 0;
  for (std::string prog : {"ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw", "ib_send_lat",
                           "ib_write_lat", "ib_read_lat"}) {
    SCOPED_TRACE(prog);
    std::string port = std::to_string(30000 + getpid() % 20000 + ++run);
    std::string args = " -n 100 -p " + port;
    std::string log = f.dir() + "/" + prog + ".server.log";
    pid_t server = f.SpawnOnHca("H1", "stdbuf -oL " + prog + args, log);
    ASSERT_TRUE(WaitForLine(log, "Waiting for client", 20)) << ReadFile(log);
    CliResult client =
        Shell("IBEMU_RUN_DIR=" + f.dir() + " timeout 120 " + IBEMU_BINARY + " exec --name " +
              f.name() + " --hca H3 -- " + prog + args + " localhost");
    int st = 0;
    waitpid(server, &st, 0);
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

}  // namespace
}  // namespace ibemu::testing
