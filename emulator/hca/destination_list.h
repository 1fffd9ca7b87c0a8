// The LIDs a traffic source picks its destinations from. Uniform traffic sends from every host to
// every other: a list per source of all the others is quadratic in memory (11,664 hosts: 272 MB of
// LIDs for each copy a run keeps), so sources share one list and each leaves its own LID out by
// position. Element i is the same as in a list with that LID removed, so a draw picks the same
// destination either way.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace ibemu::hca {

class DestinationList {
 public:
  DestinationList() : lids_(std::make_shared<const std::vector<uint16_t>>()) {}
  DestinationList(std::vector<uint16_t> lids)  // NOLINT: a plain list converts
      : lids_(std::make_shared<const std::vector<uint16_t>>(std::move(lids))) {}
  DestinationList(std::initializer_list<uint16_t> lids)
      : DestinationList(std::vector<uint16_t>(lids)) {}

  // `all` without `lid`, sharing `all` when the LID is in it at most once.
  static DestinationList AllBut(std::shared_ptr<const std::vector<uint16_t>> all, uint16_t lid) {
    auto at = std::find(all->begin(), all->end(), lid);
    if (at != all->end() && std::find(at + 1, all->end(), lid) != all->end()) {
      std::vector<uint16_t> v;
      for (uint16_t l : *all)
        if (l != lid) v.push_back(l);
      return DestinationList(std::move(v));
    }
    DestinationList d;
    d.lids_ = std::move(all);
    d.skip_ = static_cast<size_t>(at - d.lids_->begin());  // size(): nothing left out
    return d;
  }

  size_t size() const { return lids_->size() - (skip_ < lids_->size() ? 1 : 0); }
  bool empty() const { return size() == 0; }
  uint16_t operator[](size_t i) const { return (*lids_)[i < skip_ ? i : i + 1]; }

 private:
  std::shared_ptr<const std::vector<uint16_t>> lids_;
  size_t skip_ = SIZE_MAX;  // the position left out, or past the end
};

}  // namespace ibemu::hca
