// The trace reader (docs/traces.md): what it builds from a file, and the line each refusal names.
#include "emulator/scenario/trace_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "emulator/scenario/scenario.h"

namespace ibemu::scenario {
namespace {

std::string Write(const std::string& name, const std::string& text) {
  std::filesystem::path p = std::filesystem::temp_directory_path() /
                            ("ibemu_trace_" + std::to_string(getpid()) + "_" + name + ".trace");
  std::ofstream(p) << text;
  return p.string();
}

// The error ReadTraceFile gives, after the file name.
std::string Refusal(const std::string& name, const std::string& text) {
  std::string path = Write(name, text);
  std::string what;
  try {
    ReadTraceFile(path);
  } catch (const ScenarioError& e) {
    what = e.what();
  }
  std::filesystem::remove(path);
  EXPECT_EQ(what.rfind(path + ":", 0), 0u) << what;
  return what.substr(std::min(what.size(), path.size() + 1));
}

TEST(TraceFile, ReadsEachRanksOperationsInOrderWhateverTheInterleaving) {
  std::string path = Write("ok",
                           "# a comment\n\nranks 3\n"
                           "2 recv 0 100  # rank 2 first\n"
                           "0 compute 2.5us\n"
                           "0 send 2 100\n"
                           "0 compute 7\n"
                           "1 compute 1ms\n");
  hca::TraceProgram p = ReadTraceFile(path);
  std::filesystem::remove(path);
  ASSERT_EQ(p.ranks.size(), 3u);
  ASSERT_EQ(p.ranks[0].size(), 3u);
  EXPECT_EQ(p.ranks[0][0].kind, hca::TraceOp::kCompute);
  EXPECT_EQ(p.ranks[0][0].value, 2'500'000u);  // ps
  EXPECT_EQ(p.ranks[0][1].kind, hca::TraceOp::kSend);
  EXPECT_EQ(p.ranks[0][1].peer, 2u);
  EXPECT_EQ(p.ranks[0][1].value, 100u);
  EXPECT_EQ(p.ranks[0][2].value, 7'000u);  // a bare number is ns
  EXPECT_EQ(p.ranks[1][0].value, 1'000'000'000u);
  ASSERT_EQ(p.ranks[2].size(), 1u);
  EXPECT_EQ(p.ranks[2][0].kind, hca::TraceOp::kRecv);
  EXPECT_EQ(p.ranks[2][0].peer, 0u);
}

TEST(TraceFile, RefusesWhatNoFabricCouldRunNamingTheLine) {
  EXPECT_EQ(Refusal("empty", "# nothing\n"), "1: no 'ranks N' line: the file holds no trace");
  EXPECT_EQ(Refusal("header", "0 send 1 8\n"),
            "1: the first line must be 'ranks N' (how many ranks the trace has)");
  EXPECT_EQ(Refusal("rank", "ranks 2\n2 compute 5\n"), "2: '2' is not a rank (0..1)");
  EXPECT_EQ(Refusal("op", "ranks 2\n0 sned 1 8\n"),
            "2: 'sned' is not an operation (compute, send, recv)");
  EXPECT_EQ(Refusal("self", "ranks 2\n1 send 1 8\n"), "2: rank 1 cannot send to itself");
  EXPECT_EQ(Refusal("size", "ranks 2\n0 send 1 -8\n"),
            "2: '-8' is not a message size in bytes (0..4294967295)");
  EXPECT_EQ(Refusal("duration", "ranks 2\n0 compute 5 parsecs\n"),
            "2: expected '<rank> compute <duration>'");
  EXPECT_EQ(Refusal("unit", "ranks 2\n0 compute 5parsecs\n"),
            "2: '5parsecs' is not a duration (ns, or with a unit: 2.5us)");
  EXPECT_EQ(Refusal("unreceived", "ranks 2\n0 send 1 8\n0 send 1 8\n1 recv 0 8\n"),
            "3: rank 0 to rank 1: message 2 of 2 is never received");
  EXPECT_EQ(Refusal("unsent", "ranks 2\n1 recv 0 8\n"),
            "2: rank 0 to rank 1: receive 1 has no message (0 sent)");
  EXPECT_EQ(Refusal("three",
                    "ranks 3\n0 recv 2 8\n0 send 1 8\n1 recv 0 8\n1 send 2 8\n"
                    "2 recv 1 8\n2 send 0 8\n"),
            "2: the trace deadlocks: rank 0 waits here for a message from rank 2, which is "
            "waiting itself at line 6");
}

}  // namespace
}  // namespace ibemu::scenario
