// Must-show 2 of the verbs host library: Debian's ibv_rc_pingpong, ibv_uc_pingpong,
// ibv_ud_pingpong and ibv_srq_pingpong, unmodified,
// between two emulated HCAs in separate processes (`ibemu exec --hca`), after OpenSM has brought
// the fabric up: their data checked (-c: the server verifies what it received, which it can only
// do if the payload crossed the emulated wire into its buffer), several message sizes (one packet,
// a full MTU, many packets), with and without completion events (-e).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

class VerbsPingpong : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibverbs";
#endif
    if (!HaveTool("ibv_rc_pingpong") || !HaveTool("opensm"))
      GTEST_SKIP() << "ibverbs-utils and opensm are not installed (scripts/install-deps.sh)";
  }

  // The fabric answers and OpenSM has brought the subnet up.
  static void BringUp(const UpFabric& f, SmProcess* sm) {
    ASSERT_TRUE(f.ready());
    sm->pid = StartOpenSm(f);
    ASSERT_GT(sm->pid, 0) << "OpenSM did not bring the subnet up";
  }

  // One pingpong run: the server on H1, the client on H3 (three switches apart in the test
  // bed: H1 on S1, H3 on S2). Both must end with status 0 and report their iterations.
  void Run(const UpFabric& f, const std::string& prog, const std::string& args) {
    SCOPED_TRACE(prog + " " + args);
    std::string port = FreeTcpPort();
    std::string log = f.dir() + "/server" + port + ".log";
    // Line-buffered, so the server's first line shows it is about to listen.
    pid_t server = f.SpawnOnHca("H1", "stdbuf -oL " + prog + " " + args + " -p " + port, log);
    ASSERT_TRUE(WaitForLine(log, "local address", 20)) << ReadFile(log);
    std::string client_cmd = prog + " " + args + " -p " + port + " localhost";
    CliResult client = f.ExecOnHca("H3", client_cmd);
    // The client may try before the server listens: once more, a moment later.
    if (client.out.find("Couldn't connect") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      client = f.ExecOnHca("H3", client_cmd);
    }
    int st = 0;
    waitpid(server, &st, 0);
    std::string out = ReadFile(log);
    EXPECT_EQ(client.status, 0) << client.out;
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out;
    EXPECT_NE(client.out.find(" iters in "), std::string::npos) << client.out;
    EXPECT_NE(out.find(" iters in "), std::string::npos) << out;
    EXPECT_EQ(out.find("invalid data"), std::string::npos) << out;
    EXPECT_EQ(out.find("Failed status"), std::string::npos) << out;
    if (args.find("-t") != std::string::npos) {  // the timestamps made sense: cycles between them
      EXPECT_NE(out.find("Average receive completion clock cycles = "), std::string::npos) << out;
    }
  }
};

TEST_F(VerbsPingpong, RcAndUcBetweenTwoHostsAfterOpenSmWithTheirDataChecked) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  SmProcess sm;
  ASSERT_NO_FATAL_FAILURE(BringUp(f, &sm));
  // The path MTU is 1024 (the default -m), so 4096 bytes are 4 packets, 65536 are 64.
  Run(f, "ibv_rc_pingpong", "-s 1 -n 50 -c");
  Run(f, "ibv_rc_pingpong", "-s 4096 -n 200 -c");
  Run(f, "ibv_rc_pingpong", "-s 65536 -n 20 -c");
  Run(f, "ibv_rc_pingpong", "-s 3000 -n 100 -e -c");
  Run(f, "ibv_rc_pingpong", "-s 10000 -n 50 -m 2048 -c");
  // -t: an extended CQ with completion timestamps from the HCA's clock.
  Run(f, "ibv_rc_pingpong", "-s 4096 -n 50 -t -c");
  Run(f, "ibv_uc_pingpong", "-s 4096 -n 100 -c");
  Run(f, "ibv_uc_pingpong", "-s 20000 -n 20 -e -c");
}

// UD: one datagram per message up to the 2048-byte MTU, landing 40 bytes into the receive
// buffer (the GRH's place, which -c checks), and with -g 0 through global address handles, so
// every datagram carries a GRH that lands in those 40 bytes; SRQ: 16 (and 4) RC QPs drawing on one
// shared receive queue, completions told apart by their QP number.
TEST_F(VerbsPingpong, UdAndSrqBetweenTwoHostsAfterOpenSmWithTheirDataChecked) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  SmProcess sm;
  ASSERT_NO_FATAL_FAILURE(BringUp(f, &sm));
  Run(f, "ibv_ud_pingpong", "-s 1 -n 50 -c");
  Run(f, "ibv_ud_pingpong", "-s 2048 -n 100 -c");
  Run(f, "ibv_ud_pingpong", "-s 500 -n 50 -e -c");
  Run(f, "ibv_ud_pingpong", "-s 1024 -n 50 -g 0 -c");
  Run(f, "ibv_srq_pingpong", "-n 200 -c");
  Run(f, "ibv_srq_pingpong", "-q 4 -s 9000 -n 40 -e -c");
}

}  // namespace
}  // namespace ibemu::testing
