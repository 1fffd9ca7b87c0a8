#include "emulator/cli/host_libs.h"

#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace ibemu::cli {
namespace {

std::string HostLibDir(const char* env, const std::string& sub, const char* file,
                       const char* target) {
  std::string dir;
  if (const char* d = std::getenv(env)) dir = d;
  if (dir.empty()) {
    std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
    dir = (self.parent_path().parent_path() / "hostlib" / sub).string();
  }
  if (!std::filesystem::exists(std::filesystem::path(dir) / file))
    throw std::runtime_error("no " + std::string(file) + " in " + dir + " (build the " + target +
                             " target, or set " + env + ")");
  return dir;
}

}  // namespace

std::string HostLibraryPath() {
  std::string ld = HostLibDir("IBEMU_UMAD_LIBDIR", "umad", "libibumad.so.3", "ibemu_umad") + ":" +
                   HostLibDir("IBEMU_VERBS_LIBDIR", "verbs", "libibverbs.so.1", "ibemu_verbs");
  if (const char* old = std::getenv("LD_LIBRARY_PATH"); old && *old) ld += ":" + std::string(old);
  return ld;
}

}  // namespace ibemu::cli
