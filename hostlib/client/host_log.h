// Diagnostics in libibumad's own format ("ibwarn: [pid] function: message"), so umad_debug() and
// umad_dump() output looks the same as with the real library.
#pragma once
#include <atomic>

namespace ibemu::hostclient {

// umad_debug() level; IBEMU_UMAD_DEBUG=<n> sets it at load time.
std::atomic<int>& DebugLevel();

void Warn(const char* func, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace ibemu::hostclient

#define HOST_TRACE(...)                                                                          \
  do {                                                                                           \
    if (::ibemu::hostclient::DebugLevel() > 0) ::ibemu::hostclient::Warn(__func__, __VA_ARGS__); \
  } while (0)
