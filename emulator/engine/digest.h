// Event-trace digest: every logical process folds the events it handles into a 64-bit hash, and a
// run's digest combines those in LP order. The partitioning changes which process holds an LP, not
// what the LP sees, so equal digests across partitionings show the same execution.
#pragma once
#include <cstdint>

namespace ibemu::engine {

class Digest {
 public:
  void Add(uint64_t v) {
    // One multiply-xorshift round per word: cheap, and order-sensitive, which is the point.
    h_ = (h_ ^ v) * 0x9E3779B97F4A7C15ull;
    h_ ^= h_ >> 29;
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace ibemu::engine
