// What bench/umad_rtt.cc and bench/sim_residence.cc, the LD_PRELOAD timers of
// bench/mgmt_bench.sh, both need: the wrapped function, a MAD's TID, and a percentile.
#pragma once
#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibemu::bench {

// The next definition of `name` after the preloaded one: the function a wrapper stands for.
template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The low 32 bits of a MAD's TID (bytes 12-15, big-endian): the part that the kernel and the
// libraries leave as the tool set it, so both ends of a round trip see the same value.
inline uint32_t TidLow(const uint8_t* mad) {
  return uint32_t{mad[12]} << 24 | uint32_t{mad[13]} << 16 | uint32_t{mad[14]} << 8 | mad[15];
}

// The q-quantile (0 to 1) of sorted, non-empty samples, by the nearest lower rank.
inline double Percentile(const std::vector<double>& sorted, double q) {
  return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
}

}  // namespace ibemu::bench
