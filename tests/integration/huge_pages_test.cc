// IBEMU_HUGE_PAGES=1 (docs/cli.md): ibemu re-executes itself with glibc.malloc.hugetlb=1 and puts
// GLIBC_TUNABLES back as the caller had it before it starts anything. A program run through
// `ibemu exec` must see the caller's environment, whether the variable was set, empty or unset.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

// Sets (or, with nullopt, unsets) an environment variable for the scope, then puts it back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HugePages, ProgramsStartedByIbemuSeeTheCallersGlibcTunables) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  ScopedEnv on("IBEMU_HUGE_PAGES", "1");
  const std::string show =
      "sh -c 'echo \"T=${GLIBC_TUNABLES-unset} S=${IBEMU_SAVED_GLIBC_TUNABLES-unset}\"'";
  struct Case {
    std::optional<std::string> tunables;
    std::string want;
  } cases[] = {
      {std::nullopt, "T=unset S=unset"},
      {"", "T= S=unset"},
      {"glibc.malloc.arena_max=2", "T=glibc.malloc.arena_max=2 S=unset"},
  };
  for (const Case& c : cases) {
    ScopedEnv t("GLIBC_TUNABLES", c.tunables);
    CliResult r = f.ExecOnHca("H1", show);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find(c.want), std::string::npos)
        << "GLIBC_TUNABLES " << (c.tunables ? "'" + *c.tunables + "'" : "unset") << ": " << r.out;
  }
}

}  // namespace
}  // namespace ibemu::testing
