// Per-interval accumulators for results: counters (bytes in a bin) and time-weighted integrals of
// piecewise-constant values (buffer occupancy, credit-stalled state).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::stats {

using link::SimTime;

// Bins stored sparsely: only those from the first to the last one touched hold memory. A fabric
// that stays up has an hour of bins: every verbs QP that connects gets a flow of seven series,
// and every port and VL two. Held densely, each 8-rank MPI job left about 19 MB behind
// (docs/mpi.md), and bringing up the 648-node fat tree zeroed 150 MB of port series.
class SparseBins {
 public:
  void Clear() {
    first_ = 0;
    v_.clear();
  }
  // Bin i's value (0 for a bin never touched).
  int64_t at(size_t i) const { return i >= first_ && i - first_ < v_.size() ? v_[i - first_] : 0; }
  int64_t& Slot(size_t i) {
    // A bin already held is the common case (every packet's arrival and release touches one).
    // i < first_ wraps to a large k.
    if (size_t k = i - first_; k < v_.size()) [[likely]]
      return v_[k];
    return Grow(i);
  }
  size_t first() const { return first_; }
  const std::vector<int64_t>& held() const { return v_; }

 private:
  int64_t& Grow(size_t i) {
    if (v_.empty()) {
      first_ = i;
      v_.push_back(0);
    } else if (i < first_) {
      v_.insert(v_.begin(), first_ - i, 0);
      first_ = i;
    } else if (i - first_ >= v_.size()) {
      v_.resize(i - first_ + 1, 0);
    }
    return v_[i - first_];
  }

  size_t first_ = 0;  // the bin v_[0] holds
  std::vector<int64_t> v_;
};

// Values combined per interval: summed (BinnedCounter: bytes, packets) or the largest kept
// (BinnedMax: the worst latency). Merging two combines them bin by bin the same way.
template <class Combine>
class Binned {
 public:
  void Init(SimTime bin, int bins) {
    bin_ = bin;
    bins_ = bins > 0 ? static_cast<size_t>(bins) : 0;
    v_.Clear();
  }
  void Add(SimTime t, int64_t x) {
    if (bin_ <= 0) return;
    size_t i = static_cast<size_t>(t / bin_);
    if (i < bins_) {
      int64_t& slot = v_.Slot(i);
      slot = Combine{}(slot, x);
    }
  }
  // Bin i's value (0 for a bin never touched).
  int64_t at(size_t i) const { return v_.at(i); }
  void Set(size_t i, int64_t x) {
    if (i < bins_) v_.Slot(i) = x;
  }
  size_t bins() const { return bins_; }
  // How many bins hold memory: from the first touched to the last.
  size_t held() const { return v_.held().size(); }
  // Every bin, dense (tests and the partition protocol).
  std::vector<int64_t> values() const {
    std::vector<int64_t> d(bins_, 0);
    const std::vector<int64_t>& h = v_.held();
    for (size_t k = 0; k < h.size() && v_.first() + k < bins_; ++k) d[v_.first() + k] = h[k];
    return d;
  }
  int64_t total() const {
    int64_t s = 0;
    for (int64_t x : v_.held()) s += x;
    return s;
  }
  void Merge(const Binned& o) {
    bins_ = std::max(bins_, o.bins_);
    const std::vector<int64_t>& h = o.v_.held();
    for (size_t k = 0; k < h.size(); ++k) {
      int64_t& slot = v_.Slot(o.v_.first() + k);
      slot = Combine{}(slot, h[k]);
    }
  }

 private:
  SimTime bin_ = 0;
  size_t bins_ = 0;
  SparseBins v_;
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
//
// What falls into the bin of the last advance is summed in the object (acc_) and added to the
// bin's slot only when time leaves that bin: every packet's arrival and release advances an
// integral, and the slot's memory is a cache miss apart from the object's. Aligned, so that the
// fields an advance reads (the first 48 bytes) are one cache line, not two for most of a vector's
// elements of 88 bytes.
class alignas(64) BinnedIntegral {
 public:
  void Init(SimTime bin, int bins) {
    bin_ = bin;
    bins_ = bins > 0 ? static_cast<size_t>(bins) : 0;
    v_.Clear();
    edge_ = kNoBin;
    acc_ = 0;
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
      // Mostly within the bin of the last advance: the bin is divided out only when last_ has
      // left the one known.
      if (last_ >= edge_ || last_ < edge_ - bin_) {
        if (!EnterBin(last_)) break;
      }
      SimTime end = std::min<SimTime>(now, edge_);
      acc_ += Rect(value_, end - last_);
      last_ = end;
    }
    last_ = now;
  }
  // Adds `value` over [t0, t1) after the fact (a change that is learnt late but happened at t0).
  void AddRect(SimTime t0, SimTime t1, int64_t value) {
    if (bin_ <= 0 || value == 0 || t0 >= t1) return;
    if (edge_ != kNoBin && t0 >= edge_ - bin_ && t1 <= edge_) {
      acc_ += Rect(value, t1 - t0);  // within the bin being summed, the common case
      return;
    }
    while (t0 < t1) {
      size_t i = static_cast<size_t>(t0 / bin_);
      if (i >= bins_) break;
      SimTime end = std::min<SimTime>(t1, static_cast<SimTime>(i + 1) * bin_);
      v_.Slot(i) += Rect(value, end - t0);
      t0 = end;
    }
  }
  // Mean value over bin i.
  double Mean(size_t i) const {
    if (bin_ <= 0) return 0;
    int64_t s = v_.at(i) + (edge_ != kNoBin && i == bin_index_ ? acc_ : 0);
    return static_cast<double>(s) / bin_;
  }
  size_t bins() const { return bins_; }
  size_t held() const { return v_.held().size(); }
  double MeanOverall(SimTime end) const {
    __int128 s = acc_;
    for (int64_t x : v_.held()) s += x;
    return end > 0 ? static_cast<double>(s) / static_cast<double>(end) : 0;
  }

 private:
  // Saturates rather than wraps; the overflow flag of one multiply, not a 128-bit product, since
  // this runs on every change of a sampled value.
  static int64_t Rect(int64_t value, SimTime width) {
    int64_t r;
    if (!__builtin_mul_overflow(value, width, &r)) [[likely]]
      return r;
    return (value < 0) != (width < 0) ? INT64_MIN : INT64_MAX;
  }
  // Adds the sum of the bin left to its slot and makes the bin of t the one summed (its slot
  // held from now on, as every bin an advance passes through). False when t is past the last
  // bin: nothing more is summed.
  bool EnterBin(SimTime t) {
    if (acc_ != 0) v_.Slot(bin_index_) += acc_;
    acc_ = 0;
    bin_index_ = static_cast<size_t>(t / bin_);
    if (bin_index_ >= bins_) {
      edge_ = kNoBin;
      return false;
    }
    edge_ = static_cast<SimTime>(bin_index_ + 1) * bin_;
    v_.Slot(bin_index_);
    return true;
  }

  // The fields every advance reads, first.
  SimTime bin_ = 0;
  int64_t value_ = 0;
  SimTime last_ = 0;
  // The end of bin bin_index_, which holds last_; kNoBin: none known (every time is at or after
  // it, so the bin is worked out).
  static constexpr SimTime kNoBin = INT64_MIN;
  SimTime edge_ = kNoBin;
  int64_t acc_ = 0;  // summed into bin bin_index_ and not yet added to its slot
  size_t bin_index_ = 0;
  size_t bins_ = 0;
  SparseBins v_;
};

}  // namespace ibemu::stats
