#include "hostlib/client/host_log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace ibemu::hostclient {

std::atomic<int>& DebugLevel() {
  static std::atomic<int> level{[] {
    const char* env = std::getenv("IBEMU_UMAD_DEBUG");
    return env ? std::atoi(env) : 0;
  }()};
  return level;
}

void Warn(const char* func, const char* fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  // One fprintf per line keeps lines whole when several threads report at once.
  std::fprintf(stderr, "ibwarn: [%d] %s: %s\n", static_cast<int>(getpid()), func, msg);
}

}  // namespace ibemu::hostclient
