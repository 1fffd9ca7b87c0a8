// Result accumulators: the log-linear latency histogram (32 sub-buckets per power of two) and the
// per-interval counters and time integrals of emulator/results.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "emulator/stats/binned.h"
#include "emulator/stats/latency_histogram.h"

namespace ibemu::stats {
namespace {

// The q-quantile as Quantile() defines its rank: the sample of 1-based rank floor(q*(n-1))+1.
int64_t ExactQuantile(std::vector<int64_t> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

const double kQs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};

// Quantile() returns the upper edge of the bucket holding the exact quantile: never below it,
// and less than 1/32 above it.
void CheckResolution(const std::vector<int64_t>& samples) {
  LatencyHistogram h;
  for (int64_t v : samples) h.Add(v);
  ASSERT_EQ(h.count(), samples.size());
  for (double q : kQs) {
    int64_t exact = ExactQuantile(samples, q);
    int64_t got = h.Quantile(q);
    EXPECT_GE(got, exact) << "q=" << q;
    EXPECT_LE(static_cast<double>(got - exact), static_cast<double>(exact) / 32.0)
        << "q=" << q << " exact " << exact << " got " << got;
  }
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int64_t v = 0; v < 32; ++v) h.Add(v);
  // Rank floor(q * 31) + 1 is the sample v for q in [v/31, (v+1)/31).
  for (int64_t v = 0; v < 31; ++v) EXPECT_EQ(h.Quantile((static_cast<double>(v) + 0.5) / 31.0), v);
  EXPECT_EQ(h.Quantile(1.0), 31);
}

TEST(LatencyHistogram, BucketEdgesAtPowersOfTwo) {
  // [32, 64) is exact; [64, 128) has width 2; [2^20, 2^21) width 2^15.
  for (int64_t v : {32, 63, 64, 65, 127, 128, 1 << 20, (1 << 21) - 1}) {
    LatencyHistogram h;
    h.Add(v);
    h.Add(1'000'000'000);  // a larger max, so Quantile is not clamped to v
    int64_t width = v < 64 ? 1 : int64_t{1} << (std::bit_width(static_cast<uint64_t>(v)) - 6);
    int64_t edge = (v / width + 1) * width - 1;
    EXPECT_EQ(h.Quantile(0.0), edge) << v;
  }
}

TEST(LatencyHistogram, QuantilesOfAUniformDistributionAreWithinOneThirtySecond) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int64_t> d(1, 10'000'000);
  std::vector<int64_t> v(100'000);
  for (auto& x : v) x = d(rng);
  CheckResolution(v);
}

TEST(LatencyHistogram, QuantilesOfAnExponentialDistributionAreWithinOneThirtySecond) {
  std::mt19937_64 rng(2);
  std::exponential_distribution<double> d(1.0 / 2'000'000.0);  // mean 2 us in ps
  std::vector<int64_t> v(100'000);
  for (auto& x : v) x = static_cast<int64_t>(d(rng));
  CheckResolution(v);
}

TEST(LatencyHistogram, QuantilesOfALogUniformDistributionAreWithinOneThirtySecond) {
  // Eleven decades, from picoseconds to 100 ms.
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> d(0.0, 11.0);
  std::vector<int64_t> v(100'000);
  for (auto& x : v) x = static_cast<int64_t>(std::pow(10.0, d(rng)));
  CheckResolution(v);
}

TEST(LatencyHistogram, ConstantSamplesGiveTheValueAtEveryQuantile) {
  LatencyHistogram h;
  for (int i = 0; i < 1000; ++i) h.Add(1'234'567);
  for (double q : kQs) EXPECT_EQ(h.Quantile(q), 1'234'567) << q;  // clamped to max
  EXPECT_EQ(h.max(), 1'234'567);
  EXPECT_DOUBLE_EQ(h.mean(), 1'234'567.0);
}

TEST(LatencyHistogram, MeanAndMaxAreExact) {
  LatencyHistogram h;
  h.Add(100);
  h.Add(200);
  h.Add(1'000'003);
  EXPECT_EQ(h.count(), 3u);
  EXPECT_EQ(h.max(), 1'000'003);
  EXPECT_DOUBLE_EQ(h.mean(), (100 + 200 + 1'000'003) / 3.0);
  EXPECT_EQ(h.Quantile(1.0), 1'000'003);
}

TEST(LatencyHistogram, EmptyHistogramReportsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.Quantile(0.5), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(LatencyHistogram, NegativeSamplesCountAsZero) {
  LatencyHistogram h;
  h.Add(-5);
  h.Add(-1'000'000);
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.Quantile(1.0), 0);
  EXPECT_EQ(h.mean(), 0.0);
}

TEST(LatencyHistogram, MergeEqualsAddingAllSamplesToOneHistogram) {
  std::mt19937_64 rng(4);
  std::exponential_distribution<double> d(1.0 / 500'000.0);
  LatencyHistogram all, parts[3];
  for (int i = 0; i < 30'000; ++i) {
    int64_t v = static_cast<int64_t>(d(rng)) + (i % 7 == 0 ? 50'000'000 : 0);
    all.Add(v);
    parts[i % 3].Add(v);
  }
  // Merge in two different orders: the result does not depend on it.
  LatencyHistogram m1 = parts[0], m2 = parts[2];
  m1.Merge(parts[1]);
  m1.Merge(parts[2]);
  m2.Merge(parts[0]);
  m2.Merge(parts[1]);
  for (const LatencyHistogram* m : {&m1, &m2}) {
    EXPECT_EQ(m->count(), all.count());
    EXPECT_EQ(m->max(), all.max());
    EXPECT_DOUBLE_EQ(m->mean(), all.mean());
    for (int i = 0; i <= 1000; ++i) {
      double q = i / 1000.0;
      ASSERT_EQ(m->Quantile(q), all.Quantile(q)) << q;
    }
  }
}

TEST(LatencyHistogram, MergingIntoAnEmptyHistogramCopiesIt) {
  LatencyHistogram a, empty;
  for (int64_t v : {5, 500, 50'000, 5'000'000}) a.Add(v);
  empty.Merge(a);
  EXPECT_EQ(empty.count(), 4u);
  EXPECT_EQ(empty.max(), 5'000'000);
  for (double q : kQs) EXPECT_EQ(empty.Quantile(q), a.Quantile(q));
  LatencyHistogram b = a;
  b.Merge(LatencyHistogram{});
  for (double q : kQs) EXPECT_EQ(b.Quantile(q), a.Quantile(q));
}

// ---------------------------------------------------------------------------------------------
// BinnedIntegral

TEST(BinnedIntegral, SplitsAConstantValueExactlyAtBinBoundaries) {
  BinnedIntegral b;
  b.Init(/*bin=*/1000, /*bins=*/5);
  b.Set(250, 7);   // 7 from t=250
  b.Set(2750, 3);  // 3 from t=2750
  b.Advance(5000);
  // bin 0: 7*750; bin 1: 7*1000; bin 2: 7*750 + 3*250; bins 3, 4: 3*1000.
  EXPECT_DOUBLE_EQ(b.Mean(0), 5.25);
  EXPECT_DOUBLE_EQ(b.Mean(1), 7.0);
  EXPECT_DOUBLE_EQ(b.Mean(2), 6.0);
  EXPECT_DOUBLE_EQ(b.Mean(3), 3.0);
  EXPECT_DOUBLE_EQ(b.Mean(4), 3.0);
  EXPECT_DOUBLE_EQ(b.MeanOverall(5000), (5250 + 7000 + 6000 + 3000 + 3000) / 5000.0);
}

TEST(BinnedIntegral, RandomStepsMatchAReferenceSummedPicosecondByBin) {
  // Steps shorter and longer than a bin, changes on and off boundaries, now and then a time
  // earlier than the last (the integral then counts from there again, as the reference does),
  // and one object re-Init with another bin width: the bin it remembers between calls must
  // never be a stale one.
  std::mt19937_64 rng(7);
  BinnedIntegral b;
  for (int64_t bin : {1000, 700, 1000}) {
    const size_t kBins = 40;
    b.Init(bin, static_cast<int>(kBins));
    std::vector<int64_t> ref(kBins, 0);
    int64_t t = 0, value = 0;
    b.Set(0, 0);
    while (t < 45 * bin) {
      int64_t next = t + static_cast<int64_t>(rng() % (5 * bin / 2));
      if (rng() % 4 == 0) next = (next / bin) * bin;  // exactly on a boundary
      if (rng() % 8 == 0) next = std::max<int64_t>(0, t - static_cast<int64_t>(rng() % (3 * bin)));
      for (int64_t u = t; u < next; ++u)
        if (static_cast<size_t>(u / bin) < kBins) ref[static_cast<size_t>(u / bin)] += value;
      value = static_cast<int64_t>(rng() % 5);
      b.Set(next, value);
      t = next;
    }
    for (size_t i = 0; i < kBins; ++i)
      EXPECT_DOUBLE_EQ(b.Mean(i), static_cast<double>(ref[i]) / static_cast<double>(bin))
          << "bin width " << bin << ", bin " << i;
  }
}

TEST(BinnedIntegral, RectanglesAndReadsInTheBinBeingSummedMatchAReference) {
  // What falls into the bin of the last advance is held in the object until time leaves the bin:
  // a rectangle added after the fact (within that bin or across others) and a read of the bin or
  // of the overall mean before time leaves it must see it all the same.
  std::mt19937_64 rng(11);
  const int64_t bin = 1000;
  const size_t kBins = 30;
  BinnedIntegral b;
  b.Init(bin, static_cast<int>(kBins));
  std::vector<int64_t> ref(kBins, 0);
  auto add = [&](int64_t from, int64_t to, int64_t v) {
    for (int64_t u = from; u < to; ++u)
      if (static_cast<size_t>(u / bin) < kBins) ref[static_cast<size_t>(u / bin)] += v;
  };
  int64_t t = 0, value = 0;
  b.Set(0, 0);
  while (t < 32 * bin) {
    int64_t next = t + static_cast<int64_t>(rng() % (bin / 3));
    add(t, next, value);
    value = static_cast<int64_t>(rng() % 6);
    b.Set(next, value);
    t = next;
    // A packet's arrival dates its blocks back to its head: mostly within this bin, sometimes
    // from an earlier one.
    bool from_before = rng() % 5 == 0;
    int64_t back = static_cast<int64_t>(rng() % (from_before ? 2 * bin : bin / 10));
    int64_t from = std::max<int64_t>(0, t - back);
    int64_t blocks = 1 + static_cast<int64_t>(rng() % 4);
    b.AddRect(from, t, blocks);
    add(from, t, blocks);
    size_t now_bin = static_cast<size_t>(t / bin);
    if (now_bin < kBins && rng() % 3 == 0) {
      ASSERT_DOUBLE_EQ(b.Mean(now_bin), static_cast<double>(ref[now_bin]) / bin) << "t " << t;
    }
  }
  int64_t total = 0;
  for (size_t i = 0; i < kBins; ++i) {
    EXPECT_DOUBLE_EQ(b.Mean(i), static_cast<double>(ref[i]) / bin) << "bin " << i;
    total += ref[i];
  }
  EXPECT_DOUBLE_EQ(b.MeanOverall(30 * bin), static_cast<double>(total) / (30 * bin));
}

TEST(BinnedIntegral, ChangeExactlyOnABoundaryBelongsToTheNextBin) {
  BinnedIntegral b;
  b.Init(1000, 3);
  b.Set(0, 10);
  b.Set(1000, 20);
  b.Set(2000, 0);
  b.Advance(3000);
  EXPECT_DOUBLE_EQ(b.Mean(0), 10.0);
  EXPECT_DOUBLE_EQ(b.Mean(1), 20.0);
  EXPECT_DOUBLE_EQ(b.Mean(2), 0.0);
}

TEST(BinnedIntegral, ManySmallStepsSumToTheSameIntegral) {
  BinnedIntegral coarse, fine;
  coarse.Init(1000, 4);
  fine.Init(1000, 4);
  coarse.Set(0, 9);
  fine.Set(0, 9);
  for (int64_t t = 0; t <= 4000; t += 7) fine.Advance(t);
  coarse.Advance(4000);
  fine.Advance(4000);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(fine.Mean(i), coarse.Mean(i)) << i;
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(fine.Mean(i), 9.0) << i;
}

TEST(BinnedIntegral, TimePastTheLastBinIsIgnored) {
  BinnedIntegral b;
  b.Init(100, 2);
  b.Set(150, 4);
  b.Advance(10'000);
  EXPECT_DOUBLE_EQ(b.Mean(0), 0.0);
  EXPECT_DOUBLE_EQ(b.Mean(1), 2.0);  // 4 * 50 / 100
  b.Set(20'000, 8);
  b.Advance(30'000);
  EXPECT_DOUBLE_EQ(b.Mean(1), 2.0);
  EXPECT_EQ(b.bins(), 2u);
  EXPECT_EQ(b.value(), 8);
}

// ---------------------------------------------------------------------------------------------
// BinnedCounter

TEST(BinnedCounter, AddsToTheBinOfTheTime) {
  BinnedCounter c;
  c.Init(100, 3);
  c.Add(0, 1);
  c.Add(99, 2);
  c.Add(100, 4);
  c.Add(299, 8);
  EXPECT_EQ(c.values(), (std::vector<int64_t>{3, 4, 8}));
  EXPECT_EQ(c.total(), 15);
}

TEST(BinnedCounter, IgnoresTimesPastTheLastBin) {
  BinnedCounter c;
  c.Init(100, 3);
  c.Add(300, 1);
  c.Add(1'000'000'000'000, 1);
  c.Add(250, 5);
  EXPECT_EQ(c.values(), (std::vector<int64_t>{0, 0, 5}));
  EXPECT_EQ(c.total(), 5);
}

TEST(BinnedCounter, MergeAddsBinByBin) {
  BinnedCounter a, b;
  a.Init(10, 2);
  b.Init(10, 3);
  a.Add(5, 1);
  a.Add(15, 2);
  b.Add(5, 10);
  b.Add(25, 30);
  a.Merge(b);
  EXPECT_EQ(a.values(), (std::vector<int64_t>{11, 2, 30}));
}

// A fabric that stays up has an hour of bins; a verbs QP that connects late and lives briefly
// holds memory only for the bins it touched, and reads back the same as a dense series.
TEST(BinnedCounter, HoldsOnlyTheBinsFromTheFirstToTheLastTouched) {
  BinnedCounter c;
  c.Init(10, 3600);
  c.Add(30'005, 7);
  c.Add(30'015, 1);
  c.Add(29'995, 2);  // before the first touched: grows at the front
  EXPECT_EQ(c.at(2999), 2);
  EXPECT_EQ(c.at(3000), 7);
  EXPECT_EQ(c.at(3001), 1);
  EXPECT_EQ(c.at(0), 0);
  EXPECT_EQ(c.at(3599), 0);
  EXPECT_EQ(c.at(5000), 0);
  EXPECT_EQ(c.total(), 10);
  std::vector<int64_t> dense(3600, 0);
  dense[2999] = 2;
  dense[3000] = 7;
  dense[3001] = 1;
  EXPECT_EQ(c.values(), dense);
  EXPECT_EQ(c.held(), 3u);  // bins 2999..3001, not 3600
  c.Set(3600, 5);           // past the last bin: ignored
  EXPECT_EQ(c.held(), 3u);
  BinnedCounter empty, never;
  c.Merge(empty);
  EXPECT_EQ(c.values(), dense);
  never.Merge(c);  // into one never initialised: takes the other's bins
  EXPECT_EQ(never.values(), dense);
  BinnedMax m;
  m.Init(10, 3600);
  m.Set(100, 4);
  BinnedMax n;
  n.Init(10, 3600);
  n.Add(1005, 9);
  n.Add(3005, 3);
  m.Merge(n);
  EXPECT_EQ(m.at(100), 9);
  EXPECT_EQ(m.at(300), 3);
  EXPECT_EQ(m.at(200), 0);
}

// The port series of a fabric that stays up (an hour of bins per port and VL) hold memory only
// where the value was non-zero: an idle port holds none.
TEST(BinnedIntegral, HoldsOnlyTheBinsFromTheFirstToTheLastTouched) {
  BinnedIntegral b;
  b.Init(10, 3600);
  b.Set(0, 0);
  b.Advance(20'000);
  EXPECT_EQ(b.held(), 0u);  // zero all along
  b.Set(20'000, 2);         // 2 from bin 2000 ...
  b.Set(20'025, 0);         // ... to the middle of bin 2002
  b.AddRect(19'995, 20'000, 4);
  EXPECT_EQ(b.held(), 4u);              // bins 1999..2002
  EXPECT_DOUBLE_EQ(b.Mean(1999), 2.0);  // 4 over half the bin
  EXPECT_DOUBLE_EQ(b.Mean(2000), 2.0);
  EXPECT_DOUBLE_EQ(b.Mean(2002), 1.0);
  EXPECT_DOUBLE_EQ(b.Mean(0), 0.0);
  EXPECT_DOUBLE_EQ(b.Mean(3599), 0.0);
  EXPECT_DOUBLE_EQ(b.MeanOverall(36'000), (20.0 + 20 + 20 + 10) / 36'000);
}

}  // namespace
}  // namespace ibemu::stats
