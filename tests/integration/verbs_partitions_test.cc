// Must-show 5 of the verbs host library, the partition half: OpenSM with a partition of H1 and H3
// (0x8001) programs the P_Key tables and turns on enforcement at the switch ports of the hosts.
// Members use the partition (ib_write_bw --pkey_index=1 between H3 and H1); a QP on H4, which is
// not a member, cannot be brought up with it (its table has no such entry); and packets of the
// partition sent to H4 are dropped by the switch and counted in S2's PortXmitConstraintErrors,
// so the sender ends in retry exceeded. H3 and H4 are limited members of a second partition:
// two limited members may not talk, so S1 drops H3's packets on that key as they come in, and
// counts them in its PortRcvConstraintErrors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

TEST(VerbsPartitions, MembersTalkAForeignPKeyIsRefusedAtTheQpAndDroppedAtTheSwitch) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibverbs";
#endif
  if (!HaveTool("ib_write_bw") || !HaveTool("opensm") || !HaveTool("perfquery"))
    GTEST_SKIP() << "perftest, opensm and infiniband-diags are needed (scripts/install-deps.sh)";
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  ASSERT_TRUE(f.ready());
  std::string parts = f.dir() + "/partitions.conf";
  std::ofstream(parts) << "Default=0x7fff, ipoib : ALL=full ;\n"
                       << "part1=0x0001 : 0x0002c90300000301=full, 0x0002c90300000501=full ;\n"
                       << "part2=0x0002 : 0x0002c90300000501=limited, 0x0002c90300000601=limited "
                          ";\n";
  SmProcess sm;
  sm.pid = StartOpenSm(f, "H1:1", 10,
                       "s|^partition_config_file .*|partition_config_file " + parts + "|");
  ASSERT_GT(sm.pid, 0) << "OpenSM did not bring the subnet up";
  CliResult table = f.ExecOnHca("H1", "smpquery -D pkeys 0 1");
  ASSERT_NE(table.out.find("0xffff 0x8001"), std::string::npos) << table.out;

  auto pair = [&](const std::string& server_hca, const std::string& client_hca,
                  const std::string& server_args, const std::string& client_args,
                  std::string* server_out) {
    std::string port = FreeTcpPort();
    std::string log = f.dir() + "/server" + port + ".log";
    pid_t server =
        f.SpawnOnHca(server_hca, "stdbuf -oL ib_write_bw -n 5 -p " + port + " " + server_args, log);
    EXPECT_TRUE(WaitForLine(log, "Waiting for client", 20)) << ReadFile(log);
    std::string cmd = "ib_write_bw -n 5 -p " + port + " " + client_args + " localhost";
    CliResult c = f.ExecOnHca(client_hca, cmd);
    // The server says it waits a moment before it listens: a client that came too soon is
    // refused, and the server waits on. Once more, as the pingpong tests do.
    if (c.out.find("Couldn't connect") != std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      c = f.ExecOnHca(client_hca, cmd);
    }
    EXPECT_TRUE(WaitForExit(server, 60)) << "the server never finished; the client said:\n"
                                         << c.out;
    *server_out = ReadFile(log);
    return c;
  };
  std::string server_out;
  // Members of the partition, both QPs on its key.
  CliResult members = pair("H1", "H3", "--pkey_index=1", "--pkey_index=1", &server_out);
  EXPECT_EQ(members.status, 0) << members.out << server_out;

  // H4's table ends at index 1 (0xffff, then part2's key): a QP on index 2 cannot go to Init.
  CliResult outsider = pair("H4", "H3", "--pkey_index=2", "--pkey_index=1", &server_out);
  EXPECT_NE(server_out.find("Failed to modify QP to INIT, ret=22"), std::string::npos)
      << server_out;

  // H1 sends on the partition's key to H4: the switch port to H4 refuses it.
  CliResult foreign = pair("H4", "H1", "", "--pkey_index=1", &server_out);
  EXPECT_NE(foreign.status, 0) << foreign.out;
  EXPECT_NE(foreign.out.find("Failed status 12"), std::string::npos) << foreign.out;
  // S2's port 1 leads to H4; S2 is reached from H1 through S1's port 4.
  CliResult lid = f.ExecOnHca("H1", "smpquery -D portinfo 0,1,4 0");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(lid.out, m, std::regex("\\nLid:\\.*([0-9]+)"))) << lid.out;
  CliResult counters = f.ExecOnHca("H1", "perfquery " + std::string(m[1]) + " 1");
  ASSERT_TRUE(
      std::regex_search(counters.out, m, std::regex("PortXmitConstraintErrors:\\.*([0-9]+)")))
      << counters.out;
  EXPECT_GT(std::stoi(m[1]), 0) << counters.out;

  // Limited to limited: H3's table has 0x0002 at index 2, H4's at index 1. S1's port 3 (to H3)
  // refuses the packets on the way in.
  CliResult h3 = f.ExecOnHca("H3", "smpquery -D pkeys 0 1");
  ASSERT_NE(h3.out.find("0xffff 0x8001 0x0002"), std::string::npos) << h3.out;
  CliResult limited = pair("H4", "H3", "--pkey_index=1", "--pkey_index=2", &server_out);
  EXPECT_NE(limited.status, 0) << limited.out;
  EXPECT_NE(limited.out.find("Failed status 12"), std::string::npos) << limited.out;
  CliResult s1 = f.ExecOnHca("H1", "smpquery -D portinfo 0,1 0");
  ASSERT_TRUE(std::regex_search(s1.out, m, std::regex("\\nLid:\\.*([0-9]+)"))) << s1.out;
  CliResult in = f.ExecOnHca("H1", "perfquery " + std::string(m[1]) + " 3");
  ASSERT_TRUE(std::regex_search(in.out, m, std::regex("PortRcvConstraintErrors:\\.*([0-9]+)")))
      << in.out;
  EXPECT_GT(std::stoi(m[1]), 0) << in.out;
}

}  // namespace
}  // namespace ibemu::testing
