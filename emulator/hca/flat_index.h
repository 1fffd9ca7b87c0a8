// A map from 64-bit keys to 32-bit values for an HCA's per-message and per-packet lookups (the QP
// of a source and destination, the AETH MSN of a requester's QP): open addressing with linear
// probing over one power-of-two array, at most half full. Memory follows the pairs actually
// seen. Arrays indexed by LID were as fast, but every HCA's row grew to the largest LID it
// met: 53 KB each per table on the 11,664-host tree, 1.2 GB of its run.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace ibemu::hca {

class FlatIndex {
 public:
  // The value of `key`, added as 0 if absent (then *added is true). The reference lasts until
  // the next Get.
  uint32_t& Get(uint64_t key, bool* added) {
    if (2 * (used_ + 1) > slots_.size()) Grow();
    uint64_t k1 = key + 1;
    size_t mask = slots_.size() - 1;
    for (size_t i = Home(k1);; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.key1 == k1) {
        *added = false;
        return s.value;
      }
      if (s.key1 == 0) {
        s.key1 = k1;
        ++used_;
        *added = true;
        return s.value;
      }
    }
  }
  size_t size() const { return used_; }

 private:
  struct Slot {
    uint64_t key1 = 0;  // key + 1; 0: empty
    uint32_t value = 0;
  };
  // Fibonacci hashing: the product's top bits, which every bit of the key reaches. The keys are
  // packed integers (a LID above a QP number) whose low bits alone would cluster.
  size_t Home(uint64_t k1) const {
    return static_cast<size_t>((k1 * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  void Grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
    shift_ = 64 - std::countr_zero(slots_.size());
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.key1 == 0) continue;
      size_t i = Home(s.key1);
      while (slots_[i].key1 != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  int shift_ = 0;  // 64 - log2(slots), set by Grow before the first lookup
  size_t used_ = 0;
};

}  // namespace ibemu::hca
