// A first-in first-out queue for the per-QP message queues of an HCA. A fabric has a QP per
// (source, destination) that ever sent, hundreds of thousands on the 648-node fat tree, and
// std::deque allocates a 512-byte block for each queue as it is made; this one holds nothing
// until its first element and keeps the room it grew to.
#pragma once
#include <cstddef>
#include <vector>

namespace ibemu::hca {

template <typename T>
class Fifo {
 public:
  bool empty() const { return head_ == items_.size(); }
  size_t size() const { return items_.size() - head_; }
  T& front() { return items_[head_]; }
  const T& front() const { return items_[head_]; }
  void push_back(const T& x) { items_.push_back(x); }
  void pop_front() {
    if (++head_ == items_.size()) {
      items_.clear();
      head_ = 0;
    } else if (head_ >= 32 && head_ * 2 >= items_.size()) {
      // Taken elements are dropped once they are half the storage: each is moved at most once.
      items_.erase(items_.begin(), items_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
  }

 private:
  std::vector<T> items_;
  size_t head_ = 0;
};

}  // namespace ibemu::hca
