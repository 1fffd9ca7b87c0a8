// Output VL arbitration (IBA 7.6.9: high/low VLArbitrationTable, weights in 64-byte units,
// LimitOfHighPriority) and crossbar input arbitration, through their registries.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "emulator/policy/builtin.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::policy {
namespace {

std::unique_ptr<VlArbiter> Make(const std::string& name, const VlArbConfig& c) {
  RegisterBuiltins();
  return VlArbiterRegistry::Get().Make(name, c);
}

uint32_t Bits(std::initializer_list<int> vls) {
  uint32_t m = 0;
  for (int v : vls) m |= 1u << v;
  return m;
}

// Picks `n` packets of `bytes` with `eligible` (which may depend on the step) and returns the VLs.
std::vector<int> RunSteps(VlArbiter& a, int n, uint32_t bytes,
                          const std::function<uint32_t(int)>& eligible) {
  std::vector<int> seq;
  for (int i = 0; i < n; ++i) {
    int vl = a.Pick(eligible(i));
    seq.push_back(vl);
    if (vl >= 0) a.Sent(vl, bytes);
  }
  return seq;
}

std::vector<int> RunAll(VlArbiter& a, int n, uint32_t bytes, uint32_t eligible) {
  return RunSteps(a, n, bytes, [=](int) { return eligible; });
}

TEST(VlArbiterRegistry, HasTheBuiltinPoliciesAndRejectsUnknownNames) {
  RegisterBuiltins();
  EXPECT_TRUE(VlArbiterRegistry::Get().Has("vlarb.ib"));
  EXPECT_TRUE(VlArbiterRegistry::Get().Has("vlarb.roundrobin"));
  EXPECT_THROW(VlArbiterRegistry::Get().Make("vlarb.nope", VlArbConfig{}), std::invalid_argument);
  EXPECT_TRUE(InputArbiterRegistry::Get().Has("xbar.roundrobin"));
  EXPECT_TRUE(InputArbiterRegistry::Get().Has("xbar.fixed"));
  EXPECT_THROW(InputArbiterRegistry::Get().Make("xbar.nope", 4), std::invalid_argument);
}

TEST(IbVlArbiter, LowTableWeights64And128Give2KPacketsInTheExactPattern) {
  VlArbConfig c;
  c.low = {{0, 64}, {1, 128}};  // 4096 and 8192 bytes per turn
  auto a = Make("vlarb.ib", c);
  std::vector<int> seq = RunAll(*a, 12, 2048, Bits({0, 1}));
  EXPECT_EQ(seq, (std::vector<int>{0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1}));
}

TEST(IbVlArbiter, LowTableWeightsSplitBytesOneToTwoWithinOnePercent) {
  // Packet sizes that are and are not multiples of the 64-byte weight unit (2074 = 2048 bytes of
  // payload plus LRH, BTH, ICRC and VCRC).
  for (uint32_t bytes : {2048u, 2074u, 256u, 1500u, 4096u, 4122u}) {
    VlArbConfig c;
    c.low = {{0, 64}, {1, 128}};
    auto a = Make("vlarb.ib", c);
    std::array<uint64_t, 2> sent{};
    for (int vl : RunAll(*a, 6000, bytes, Bits({0, 1}))) {
      ASSERT_GE(vl, 0);
      ASSERT_LE(vl, 1);
      sent[vl] += bytes;
    }
    double ratio = static_cast<double>(sent[1]) / static_cast<double>(sent[0]);
    EXPECT_NEAR(ratio, 2.0, 0.02) << bytes << "-byte packets: " << sent[0] << " vs " << sent[1];
  }
}

TEST(IbVlArbiter, HighTableIsServedFirstAndLimit255StarvesTheLowTable) {
  VlArbConfig c;
  c.high = {{2, 64}};
  c.low = {{0, 64}};
  c.limit_of_high_priority = 255;
  auto a = Make("vlarb.ib", c);
  for (int vl : RunAll(*a, 1000, 4096, Bits({0, 2}))) ASSERT_EQ(vl, 2);
}

TEST(IbVlArbiter, LimitZeroAllowsOneHighPacketBeforeEachWaitingLowPacket) {
  VlArbConfig c;
  c.high = {{2, 255}};
  c.low = {{0, 64}};
  c.limit_of_high_priority = 0;
  auto a = Make("vlarb.ib", c);
  EXPECT_EQ(RunAll(*a, 8, 2048, Bits({0, 2})), (std::vector<int>{2, 0, 2, 0, 2, 0, 2, 0}));
}

TEST(IbVlArbiter, LimitZeroStillSendsOnlyHighWhileNoLowPacketWaits) {
  VlArbConfig c;
  c.high = {{2, 255}};
  c.low = {{0, 64}};
  c.limit_of_high_priority = 0;
  auto a = Make("vlarb.ib", c);
  // Low becomes eligible at step 4: it gets the next slot, then high resumes.
  auto seq = RunSteps(*a, 8, 2048, [](int i) { return i < 4 ? Bits({2}) : Bits({0, 2}); });
  EXPECT_EQ(seq, (std::vector<int>{2, 2, 2, 2, 0, 2, 0, 2}));
}

TEST(IbVlArbiter, LimitOneLetsAbout4KBOfHighTrafficBetweenLowPackets) {
  // IBA 7.6.9.2: LimitOfHighPriority counts 4096-byte units. Between two low packets the high
  // table sends at least the limit and at most one packet more.
  for (uint32_t bytes : {256u, 1024u, 2048u}) {
    VlArbConfig c;
    c.high = {{1, 255}};
    c.low = {{0, 255}};
    c.limit_of_high_priority = 1;
    auto a = Make("vlarb.ib", c);
    auto seq = RunAll(*a, 400, bytes, Bits({0, 1}));
    uint64_t run = 0;
    int lows = 0;
    for (int vl : seq) {
      if (vl == 1) {
        run += bytes;
        continue;
      }
      ASSERT_EQ(vl, 0);
      if (lows++ > 0) {  // the first run starts from an empty counter as well
        EXPECT_GE(run, 4096u) << bytes;
        EXPECT_LE(run, 4096u + bytes) << bytes;
      }
      run = 0;
    }
    EXPECT_GT(lows, 2);
  }
}

TEST(IbVlArbiter, EntriesWithWeightZeroAreSkipped) {
  VlArbConfig c;
  c.low = {{0, 0}, {1, 64}, {2, 0}, {3, 64}};
  auto a = Make("vlarb.ib", c);
  EXPECT_EQ(RunAll(*a, 8, 2048, Bits({0, 1, 2, 3})), (std::vector<int>{1, 1, 3, 3, 1, 1, 3, 3}));
  // A VL listed only with weight 0 is never picked, even when it is the only eligible one.
  EXPECT_EQ(a->Pick(Bits({0})), -1);
  EXPECT_EQ(a->Pick(Bits({2})), -1);
}

TEST(IbVlArbiter, IneligibleVlIsSkippedWithoutCostingTheOthersTheirTurn) {
  VlArbConfig c;
  c.low = {{0, 64}, {1, 64}, {2, 64}};
  auto a = Make("vlarb.ib", c);
  EXPECT_EQ(RunAll(*a, 8, 2048, Bits({0, 2})), (std::vector<int>{0, 0, 2, 2, 0, 0, 2, 2}));
}

TEST(IbVlArbiter, VlThatBecomesEligibleMidTurnWaitsForTheCurrentEntry) {
  VlArbConfig c;
  c.low = {{0, 128}, {1, 128}};  // four 2 KB packets per turn
  auto a = Make("vlarb.ib", c);
  // VL1 gets a packet at step 1, while VL0 is in the middle of its turn.
  auto seq = RunSteps(*a, 12, 2048, [](int i) { return i == 0 ? Bits({0}) : Bits({0, 1}); });
  EXPECT_EQ(seq, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}));
}

TEST(IbVlArbiter, NothingEligibleGivesMinusOne) {
  VlArbConfig c;
  c.high = {{1, 64}};
  c.low = {{0, 64}};
  auto a = Make("vlarb.ib", c);
  EXPECT_EQ(a->Pick(0), -1);
  EXPECT_EQ(a->Pick(Bits({5})), -1);  // a VL in neither table
}

TEST(IbVlArbiter, EmptyTablesDefaultToEqualWeightsOverTheDataVls) {
  VlArbConfig c;
  c.data_vls = 3;
  auto a = Make("vlarb.ib", c);
  // Weight 64 each: two 2 KB packets per VL per turn.
  EXPECT_EQ(RunAll(*a, 12, 2048, Bits({0, 1, 2})),
            (std::vector<int>{0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(a->Pick(Bits({3})), -1);
}

// Devices call Choose and Charge, which skip Pick and Sent when the tables name one VL with
// weight. Over random eligibility they must answer as Pick and Sent do, for tables that name one
// VL (also with weightless entries for others, in one or both tables) and for tables that only
// seem to (a second VL with weight in the other table).
TEST(IbVlArbiter, ChooseAnswersAsPickForOneVlAndForSeveral) {
  std::vector<VlArbConfig> configs(5);
  configs[0].data_vls = 1;                    // the default table: VL 0 alone
  configs[1].low = {{2, 0}, {1, 4}, {3, 0}};  // VL 1, among weightless entries
  configs[2].high = {{1, 2}};                 // VL 1 in both tables
  configs[2].low = {{1, 1}, {0, 0}};
  configs[3].high = {{1, 2}};  // VL 1 high, VL 0 low: two VLs
  configs[3].low = {{0, 3}};
  configs[4].low = {{0, 0}};  // no VL with weight: never a pick
  std::mt19937 rng(7);
  for (size_t k = 0; k < configs.size(); ++k) {
    auto fast = Make("vlarb.ib", configs[k]), ref = Make("vlarb.ib", configs[k]);
    int picked = 0;
    for (int i = 0; i < 2000; ++i) {
      uint32_t eligible = rng() & 0xF;
      uint32_t bytes = 64 + rng() % 4096;
      int a = fast->Choose(eligible), b = ref->Pick(eligible);
      ASSERT_EQ(a, b) << "config " << k << " step " << i << " eligible " << eligible;
      if (a >= 0) {
        fast->Charge(a, bytes);
        ref->Sent(b, bytes);
        ++picked;
      }
    }
    EXPECT_EQ(picked > 0, k != 4) << "config " << k;
  }
}

TEST(RoundRobinVlArbiter, AlternatesExactlyBetweenEligibleVls) {
  auto a = Make("vlarb.roundrobin", VlArbConfig{});
  EXPECT_EQ(RunAll(*a, 6, 2048, Bits({0, 1})), (std::vector<int>{0, 1, 0, 1, 0, 1}));
  auto b = Make("vlarb.roundrobin", VlArbConfig{});
  EXPECT_EQ(RunAll(*b, 7, 64, Bits({1, 3, 14})), (std::vector<int>{1, 3, 14, 1, 3, 14, 1}));
  EXPECT_EQ(b->Pick(0), -1);
}

TEST(RoundRobinVlArbiter, IgnoresPacketSize) {
  auto a = Make("vlarb.roundrobin", VlArbConfig{});
  std::vector<int> seq;
  for (int i = 0; i < 6; ++i) {
    int vl = a->Pick(Bits({0, 1}));
    seq.push_back(vl);
    a->Sent(vl, vl == 0 ? 4096 : 64);
  }
  EXPECT_EQ(seq, (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

// ---------------------------------------------------------------------------------------------
// Crossbar input arbitration

std::unique_ptr<InputArbiter> MakeXbar(const std::string& name, int inputs) {
  RegisterBuiltins();
  return InputArbiterRegistry::Get().Make(name, inputs);
}

std::vector<int> PickN(InputArbiter& a, int vl, int n, int inputs, std::function<bool(int)> ok) {
  std::vector<int> seq;
  for (int i = 0; i < n; ++i) seq.push_back(a.Pick(vl, inputs, nullptr, ok));
  return seq;
}

TEST(RoundRobinInputArbiter, RotatesExactlyOverAllInputs) {
  auto a = MakeXbar("xbar.roundrobin", 4);
  EXPECT_EQ(PickN(*a, 0, 9, 4, [](int) { return true; }),
            (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3, 0}));
}

TEST(RoundRobinInputArbiter, SkipsIneligibleInputs) {
  auto a = MakeXbar("xbar.roundrobin", 5);
  EXPECT_EQ(PickN(*a, 0, 6, 5, [](int i) { return i == 1 || i == 4; }),
            (std::vector<int>{1, 4, 1, 4, 1, 4}));
  // After serving 4, input 0 is next in line when it requests.
  EXPECT_EQ(a->Pick(0, 5, nullptr, [](int i) { return i == 0 || i == 1; }), 0);
  EXPECT_EQ(a->Pick(0, 5, nullptr, [](int) { return false; }), -1);
}

TEST(RoundRobinInputArbiter, KeepsAnIndependentPointerPerVl) {
  auto a = MakeXbar("xbar.roundrobin", 3);
  auto all = [](int) { return true; };
  EXPECT_EQ(a->Pick(0, 3, nullptr, all), 0);
  EXPECT_EQ(a->Pick(0, 3, nullptr, all), 1);
  EXPECT_EQ(a->Pick(1, 3, nullptr, all), 0);  // VL1 starts from its own pointer
  EXPECT_EQ(a->Pick(0, 3, nullptr, all), 2);
  EXPECT_EQ(a->Pick(1, 3, nullptr, all), 1);
  EXPECT_EQ(a->Pick(15, 3, nullptr, all), 0);
}

TEST(FixedPriorityInputArbiter, AlwaysPicksTheLowestEligibleInput) {
  auto a = MakeXbar("xbar.fixed", 4);
  EXPECT_EQ(PickN(*a, 0, 3, 4, [](int) { return true; }), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(a->Pick(0, 4, nullptr, [](int i) { return i >= 2; }), 2);
  EXPECT_EQ(a->Pick(3, 4, nullptr, [](int i) { return i == 3; }), 3);
  EXPECT_EQ(a->Pick(0, 4, nullptr, [](int) { return false; }), -1);
}

// With the requesting inputs given as a bit mask (as the switch does), every arbiter picks what
// it picks when asked about every input, across word boundaries and wrap-around.
TEST(InputArbiters, PickTheSameWithARequestMaskAsWithout) {
  for (const char* name : {"xbar.roundrobin", "xbar.fixed"})
    for (int n : {3, 37, 64, 65, 130}) {
      auto with = MakeXbar(name, n), without = MakeXbar(name, n);
      std::mt19937 rng(static_cast<unsigned>(n));
      for (int round = 0; round < 2000; ++round) {
        std::vector<uint64_t> mask(static_cast<size_t>((n + 63) / 64), 0);
        std::vector<bool> ok(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) {
          bool requests = rng() % 4 == 0;
          if (requests) mask[static_cast<size_t>(i / 64)] |= uint64_t{1} << (i % 64);
          ok[static_cast<size_t>(i)] = requests && rng() % 2 == 0;
        }
        int vl = static_cast<int>(rng() % 2);
        auto eligible = [&](int i) { return static_cast<bool>(ok[static_cast<size_t>(i)]); };
        int a = with->Pick(vl, n, mask.data(), eligible);
        int b = without->Pick(vl, n, nullptr, eligible);
        ASSERT_EQ(a, b) << name << " n=" << n << " round " << round;
      }
    }
}

}  // namespace
}  // namespace ibemu::policy
