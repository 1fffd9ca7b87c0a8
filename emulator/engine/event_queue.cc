#include "emulator/engine/event_queue.h"

#include <algorithm>

namespace ibemu::engine {

namespace {

// The current bucket is sorted latest first, so the earliest event is popped off its back. A
// lambda, not a function: std::sort inlines it, where a function pointer cost a call per
// comparison.
constexpr auto kLater = [](const Event& x, const Event& y) { return EventBefore(y, x); };

// The far heap has four children per node: half the depth of a binary heap.
constexpr size_t kArity = 4;

}  // namespace

void EventQueue::Push(const Event& e) {
  int64_t b = BucketOf(e.time);
  if (b <= cur_) {
    // A small queue that is full, or a current_ without room: a tail call, so that the common
    // paths save no registers for it.
    if (ncur_ == limit_) [[unlikely]]
      return CurrentFull(e);
    // The current bucket (or an instant before it that the clock has not passed: the queue
    // looked ahead for the next event's time) is kept sorted, latest first.
    ++size_;
    size_t i = ncur_++;
    for (; i > 0 && EventBefore(current_[i - 1], e); --i) current_[i] = current_[i - 1];
    current_[i] = e;
    return;
  }
  ++size_;
  if (b < cur_ + kBuckets)
    AddToRing(e, b);
  else
    FarPush(e);
}

void EventQueue::AddToRing(const Event& e, int64_t b) {
  uint32_t n = free_;
  if (n == kNil) {
    n = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back({});
  } else {
    free_ = nodes_[n].next;
  }
  size_t i = Index(b);
  nodes_[n].e = e;
  nodes_[n].next = head_[i];
  head_[i] = n;
  MarkNonEmpty(i);
}

Event EventQueue::Pop() {
  Settle();
  --size_;
  return current_[--ncur_];
}

void EventQueue::Advance() {
  // The next non-empty bucket after the current one, within the ring.
  int64_t next = -1;
  size_t start = Index(cur_ + 1);
  int64_t slot = FindFrom(start);
  if (slot < 0) slot = FindFrom(0);  // wrapped: every slot from `start` on is empty
  if (slot >= 0)
    next = cur_ + 1 + (slot - static_cast<int64_t>(start) + kBuckets) % kBuckets;
  else
    next = BucketOf(far_.front().time);  // the ring is empty: jump to the far heap
  cur_ = next;
  size_t i = Index(cur_);
  MarkEmpty(i);
  uint32_t last = kNil;
  for (uint32_t n = head_[i]; n != kNil; n = nodes_[n].next) {
    AppendCurrent(nodes_[n].e);
    last = n;
  }
  // The bucket's whole list goes back to the free list in one splice, not a push per node.
  if (last != kNil) {
    nodes_[last].next = free_;
    free_ = head_[i];
  }
  head_[i] = kNil;
  // Far events that the ring now covers move into it (or, for the current bucket, into current_);
  // none is earlier than a ring event.
  while (!far_.empty() && BucketOf(far_.front().time) < cur_ + kBuckets) {
    Event e = FarPop();
    int64_t b = BucketOf(e.time);
    if (b == cur_)
      AppendCurrent(e);
    else
      AddToRing(e, b);
  }
  std::sort(current_.begin(), current_.begin() + static_cast<std::ptrdiff_t>(ncur_), kLater);
  // Nothing left in the ring or beyond it: few enough events are kept in current_ alone.
  if (size_ == ncur_ && size_ <= kSmall) {
    cur_ = kAllCurrent;
    limit_ = kSmall;
  }
}

void EventQueue::CurrentFull(const Event& e) {
  if (cur_ != kAllCurrent) {
    Grow();
    return Push(e);
  }
  // A small queue grows into a calendar: current_ is sorted latest first, so its last event is
  // the earliest, and the current bucket goes to just before it (or before e).
  cur_ = std::min(BucketOf(current_[ncur_ - 1].time), BucketOf(e.time)) - 1;
  limit_ = current_.size();
  size_t n = ncur_;
  ncur_ = 0;
  for (size_t k = 0; k < n; ++k) {
    int64_t b = BucketOf(current_[k].time);
    if (b < cur_ + kBuckets)
      AddToRing(current_[k], b);
    else
      FarPush(current_[k]);
  }
  Push(e);  // after cur_ now: into the ring
}

int64_t EventQueue::FindFrom(size_t pos) const {
  size_t w = pos / 64;
  uint64_t bits = nonempty_[w] & (~uint64_t{0} << (pos % 64));
  if (bits) return static_cast<int64_t>(w * 64) + __builtin_ctzll(bits);
  size_t next_word = w + 1;
  if (next_word >= kWords) return -1;
  size_t s = next_word / 64;
  uint64_t words = summary_[s] & (~uint64_t{0} << (next_word % 64));
  for (;;) {
    if (words) {
      size_t word = s * 64 + static_cast<size_t>(__builtin_ctzll(words));
      return static_cast<int64_t>(word * 64) + __builtin_ctzll(nonempty_[word]);
    }
    if (++s >= summary_.size()) return -1;
    words = summary_[s];
  }
}

void EventQueue::FarPush(const Event& e) {
  far_.push_back(e);
  size_t i = far_.size() - 1;
  while (i > 0) {
    size_t p = (i - 1) / kArity;
    if (!EventBefore(e, far_[p])) break;
    far_[i] = far_[p];
    i = p;
  }
  far_[i] = e;
}

Event EventQueue::FarPop() {
  Event top = far_.front();
  Event last = far_.back();
  far_.pop_back();
  size_t n = far_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t end = first + kArity < n ? first + kArity : n;
    size_t c = first;
    for (size_t k = first + 1; k < end; ++k)
      if (EventBefore(far_[k], far_[c])) c = k;
    if (!EventBefore(far_[c], last)) break;
    far_[i] = far_[c];
    i = c;
  }
  far_[i] = last;
  return top;
}

}  // namespace ibemu::engine
