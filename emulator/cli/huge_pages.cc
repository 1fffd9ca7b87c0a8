#include "emulator/cli/huge_pages.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ibemu::cli {

namespace {

// Set in the re-executed image: GLIBC_TUNABLES as the caller had it, "s<value>" when set (also to
// the empty string), "u" when unset.
constexpr const char* kSaved = "IBEMU_SAVED_GLIBC_TUNABLES";
constexpr const char* kTunable = "glibc.malloc.hugetlb=1";

void RestoreTunables(const char* saved) {
  if (saved[0] == 's')
    setenv("GLIBC_TUNABLES", saved + 1, 1);
  else
    unsetenv("GLIBC_TUNABLES");
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
  // The executable's own path rather than /proc/self/exe, which would name the process "exe"
  // (ps, pgrep and killall go by that name). A program started through ld.so by hand would
  // re-execute the loader; not a way ibemu is started.
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = '\0';
  std::string keep = old ? std::string("s") + old : std::string("u");
  std::string tunables = old && *old ? std::string(old) + ":" + kTunable : std::string(kTunable);
  setenv(kSaved, keep.c_str(), 1);
  setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
  execv(self, argv);
  int err = errno;
  RestoreTunables(keep.c_str());
  std::fprintf(stderr, "ibemu: IBEMU_HUGE_PAGES=1: cannot re-execute %s (%s); small pages\n", self,
               std::strerror(err));
}

}  // namespace ibemu::cli
