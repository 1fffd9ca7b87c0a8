// A set of ports as bits in 64-bit words (bit p of word p / 64), as the switch keeps its
// requests: outputs and arbiters visit the set bits rather than every port of a 37-port switch.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ibemu::policy {

// The first port at or after `from` in the mask of `words` words, or words * 64 when none.
inline int NextPort(const uint64_t* mask, size_t words, int from) {
  for (size_t w = static_cast<size_t>(from) / 64; w < words; ++w) {
    uint64_t bits = mask[w];
    if (w == static_cast<size_t>(from) / 64) bits &= ~uint64_t{0} << (from % 64);
    if (bits) return static_cast<int>(w * 64) + __builtin_ctzll(bits);
  }
  return static_cast<int>(words * 64);
}

}  // namespace ibemu::policy
