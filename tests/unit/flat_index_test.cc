// The HCA's lookup table (emulator/hca/flat_index.h) against std::map: keys added once, found
// again with the value last written, across growth, with keys packed as the HCA packs them
// (source << 16 | DLID, SLID << 32 | QP) and the edge keys 0 and 2^64 - 2.
#include "emulator/hca/flat_index.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace ibemu::hca {
namespace {

TEST(FlatIndex, MatchesAMapAcrossGrowth) {
  FlatIndex idx;
  std::map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    uint64_t a = rng() % 64, b = rng() % 13285;
    uint64_t key = i % 2 ? a << 16 | b : b << 32 | a;
    if (i % 1000 == 0) key = i % 3000 == 0 ? 0 : UINT64_MAX - 1;
    bool added;
    uint32_t& v = idx.Get(key, &added);
    auto it = ref.find(key);
    ASSERT_EQ(added, it == ref.end()) << "key " << key;
    if (added) {
      ASSERT_EQ(v, 0u);
      it = ref.emplace(key, 0).first;
    } else {
      ASSERT_EQ(v, it->second) << "key " << key;
    }
    v = it->second = static_cast<uint32_t>(rng());
  }
  EXPECT_EQ(idx.size(), ref.size());
  for (const auto& [key, value] : ref) {
    bool added;
    EXPECT_EQ(idx.Get(key, &added), value);
    EXPECT_FALSE(added);
  }
}

}  // namespace
}  // namespace ibemu::hca
