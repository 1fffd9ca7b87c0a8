// Must-show 4 of the verbs host library: the error paths, each with the status and errno the real
// library gives and exactly one completion per work request. The cases are a verbs program of
// our own (tests/verbs/verbs_errors_probe.cc) run on an HCA of a fabric that is up. Two cases
// are not error paths: empty and long SENDs, and a UD datagram to a global address with its GRH.
#include <gtest/gtest.h>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

TEST(VerbsErrors, EveryErrorPathGivesTheRealStatusAndOneCompletionPerRequest) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer build: the probe cannot load an instrumented libibverbs";
#endif
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  CliResult r = f.ExecOnHca("H1", IBEMU_VERBS_PROBE);
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("[  PASSED  ] 19 tests."), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ibemu::testing
