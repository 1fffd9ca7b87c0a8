#include "emulator/cli/huge_pages.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace ibemu::cli {

namespace {

// Set in the re-executed image: GLIBC_TUNABLES as the caller had it, after this prefix (so that
// an unset variable and an empty one stay apart).
constexpr const char* kSaved = "IBEMU_SAVED_GLIBC_TUNABLES";
constexpr const char* kTunable = "glibc.malloc.hugetlb=1";

void RestoreTunables(const char* saved) {
  if (saved[0] == 'u')  // "u": it was unset
    unsetenv("GLIBC_TUNABLES");
  else
    setenv("GLIBC_TUNABLES", saved + 1, 1);  // "s<value>"
  unsetenv(kSaved);
}

}  // namespace

void ReexecWithHugePages(char** argv) {
  if (const char* saved = std::getenv(kSaved)) {
    RestoreTunables(saved);
    return;
  }
  const char* on = std::getenv("IBEMU_HUGE_PAGES");
  if (!on || std::strcmp(on, "1") != 0) return;
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) return;
  const char* old = std::getenv("GLIBC_TUNABLES");
  if (old && std::strstr(old, "glibc.malloc.hugetlb")) return;
  std::string keep = old ? std::string("s") + old : std::string("u");
  std::string tunables = old && *old ? std::string(old) + ":" + kTunable : std::string(kTunable);
  setenv(kSaved, keep.c_str(), 1);
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  execv("/proc/self/exe", argv);
  RestoreTunables(keep.c_str());  // the exec failed: carry on with small pages
}

}  // namespace ibemu::cli
