// Per-interval accumulators for results: counters (bytes in a bin) and time-weighted integrals of
// piecewise-constant values (buffer occupancy, credit-stalled state).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::stats {

using link::SimTime;

// Values combined per interval: summed (BinnedCounter: bytes, packets) or the largest kept
// (BinnedMax: the worst latency). Merging two combines them bin by bin the same way.
template <class Combine>
class Binned {
 public:
  void Init(SimTime bin, int bins) {
    bin_ = bin;
    v_.assign(bins, 0);
  }
  void Add(SimTime t, int64_t x) {
    if (bin_ <= 0) return;
    size_t i = static_cast<size_t>(t / bin_);
    if (i < v_.size()) v_[i] = Combine{}(v_[i], x);
  }
  const std::vector<int64_t>& values() const { return v_; }
  std::vector<int64_t>& mutable_values() { return v_; }
  int64_t total() const {
    int64_t s = 0;
    for (int64_t x : v_) s += x;
    return s;
  }
  void Merge(const Binned& o) {
    if (v_.size() < o.v_.size()) v_.resize(o.v_.size(), 0);
    for (size_t i = 0; i < o.v_.size(); ++i) v_[i] = Combine{}(v_[i], o.v_[i]);
  }

 private:
  SimTime bin_ = 0;
  std::vector<int64_t> v_;
};

struct SumOf {
  int64_t operator()(int64_t a, int64_t b) const { return a + b; }
};
struct MaxOf {
  int64_t operator()(int64_t a, int64_t b) const { return std::max(a, b); }
};
using BinnedCounter = Binned<SumOf>;
using BinnedMax = Binned<MaxOf>;

// Integral over time of a value, split at bin boundaries: sum(value * ps) per bin.
class BinnedIntegral {
 public:
  void Init(SimTime bin, int bins) {
    bin_ = bin;
    v_.assign(bins, 0);
  }
  void Set(SimTime now, int64_t value) {
    Advance(now);
    value_ = value;
  }
  int64_t value() const { return value_; }
  void Advance(SimTime now) {
    if (bin_ <= 0 || value_ == 0) {
      last_ = now;
      return;
    }
    while (last_ < now) {
      size_t i = static_cast<size_t>(last_ / bin_);
      if (i >= v_.size()) break;
      SimTime end = std::min<SimTime>(now, static_cast<SimTime>(i + 1) * bin_);
      v_[i] += static_cast<__int128>(value_) * (end - last_) > INT64_MAX ? INT64_MAX
                                                                         : value_ * (end - last_);
      last_ = end;
    }
    last_ = now;
  }
  // Adds `value` over [t0, t1) after the fact (a change that is learnt late but happened at t0).
  void AddRect(SimTime t0, SimTime t1, int64_t value) {
    if (bin_ <= 0 || value == 0) return;
    while (t0 < t1) {
      size_t i = static_cast<size_t>(t0 / bin_);
      if (i >= v_.size()) break;
      SimTime end = std::min<SimTime>(t1, static_cast<SimTime>(i + 1) * bin_);
      v_[i] += value * (end - t0);
      t0 = end;
    }
  }
  // Mean value over bin i.
  double Mean(size_t i) const { return bin_ > 0 ? static_cast<double>(v_[i]) / bin_ : 0; }
  size_t bins() const { return v_.size(); }
  double MeanOverall(SimTime end) const {
    __int128 s = 0;
    for (int64_t x : v_) s += x;
    return end > 0 ? static_cast<double>(s) / static_cast<double>(end) : 0;
  }

 private:
  SimTime bin_ = 0;
  SimTime last_ = 0;
  int64_t value_ = 0;
  std::vector<int64_t> v_;
};

}  // namespace ibemu::stats
