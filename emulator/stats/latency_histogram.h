// Log-linear histogram of latencies in picoseconds: 32 sub-buckets per power of two (about 3%
// resolution), integer counts, so merging partitions is exact and order-independent.
#pragma once
#include <bit>
#include <cstdint>
#include <vector>

namespace ibemu::stats {

class LatencyHistogram {
 public:
  static constexpr int kSub = 32;
  void Add(int64_t v) {
    if (v < 0) v = 0;
    size_t i = Index(static_cast<uint64_t>(v));
    if (i >= counts_.size()) counts_.resize(i + 1, 0);
    ++counts_[i];
    ++n_;
    sum_ += v;
    if (v > max_) max_ = v;
  }
  void Merge(const LatencyHistogram& o) {
    if (counts_.size() < o.counts_.size()) counts_.resize(o.counts_.size(), 0);
    for (size_t i = 0; i < o.counts_.size(); ++i) counts_[i] += o.counts_[i];
    n_ += o.n_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
  }
  uint64_t count() const { return n_; }
  int64_t sum() const { return sum_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  // Rebuilds a histogram sent from another process.
  static LatencyHistogram FromRaw(std::vector<uint64_t> counts, uint64_t n, int64_t sum,
                                  int64_t max) {
    LatencyHistogram h;
    h.counts_ = std::move(counts);
    h.n_ = n;
    h.sum_ = sum;
    h.max_ = max;
    return h;
  }
  int64_t max() const { return max_; }
  double mean() const { return n_ ? static_cast<double>(sum_) / n_ : 0; }
  // Upper edge of the bucket holding the q-quantile.
  int64_t Quantile(double q) const {
    if (n_ == 0) return 0;
    uint64_t target = static_cast<uint64_t>(q * static_cast<double>(n_ - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= target) return std::min<int64_t>(UpperEdge(i), max_);
    }
    return max_;
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < kSub) return v;
    int e = std::bit_width(v) - 6;  // v >> e lies in [32, 64)
    return static_cast<size_t>((e + 1) * kSub + ((v >> e) - kSub));
  }
  static int64_t UpperEdge(size_t i) {
    if (i < kSub) return static_cast<int64_t>(i);
    size_t e = i / kSub - 1, m = i % kSub + kSub;
    return static_cast<int64_t>(((m + 1) << e) - 1);
  }
  std::vector<uint64_t> counts_;
  uint64_t n_ = 0;
  int64_t sum_ = 0;
  int64_t max_ = 0;
};

}  // namespace ibemu::stats
