// Event-trace digest: every logical process folds the events it handles into a 64-bit hash, and a
// run's digest combines those in LP order. The partitioning changes which process holds an LP, not
// what the LP sees, so equal digests across partitionings show the same execution.
#pragma once
#include <cstdint>

namespace ibemu::engine {

class Digest {
 public:
  void Add(uint64_t v) {
    // FNV-1a over the eight bytes: cheap, and order-sensitive, which is the point.
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xFF;
      h_ *= 0x100000001b3ull;
    }
  }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

}  // namespace ibemu::engine
