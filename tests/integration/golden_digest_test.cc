// Two runs of one build agreeing says nothing about a change of model slipping in: each committed
// scenario of golden_digests.h must give its pinned digest, event count and packet-hops.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "tests/integration/cli_util.h"
#include "tests/integration/golden_digests.h"

namespace ibemu::testing {
namespace {

class GoldenDigest : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenDigest, RunGivesThePinnedDigestEventsAndPacketHops) {
  const Golden& g = GetParam();
  TempDir out("golden");
  CliResult r = Ibemu("run -q --no-plot " + std::string(IBEMU_SOURCE_DIR) + "/" + g.scenario +
                      " -o " + out.path() + g.extra);
  ASSERT_EQ(r.status, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("events ([0-9]+)  packet-hops ([0-9]+)")))
      << r.out;
  EXPECT_EQ(std::stoll(m[1]), g.events) << r.out;
  EXPECT_EQ(std::stoll(m[2]), g.packet_hops) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("digest ([0-9a-f]{16})"))) << r.out;
  EXPECT_EQ(m[1], g.digest) << "the model changed: if on purpose, update golden_digests.h and "
                               "say why in the commit\n"
                            << r.out;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, GoldenDigest, ::testing::ValuesIn(Goldens()),
                         [](const ::testing::TestParamInfo<Golden>& i) { return i.param.name; });

}  // namespace
}  // namespace ibemu::testing
