// The pending events of a partition, earliest first in the order EventBefore defines.
//
// A calendar queue: events within kBuckets buckets of the current one sit in per-bucket lists,
// later ones in a 4-ary heap that feeds the buckets as time reaches them. Almost every
// event of a fabric is posted less than a few microseconds ahead (a link's flight, a serialisation,
// a switch's latency), so a push is an append and a pop takes the last of the current bucket's few
// events, where a heap over all pending events (thousands) cost about 500 instructions per
// pop, a third of the work per event. Only the current bucket is kept ordered (sorted by the full
// key when time reaches it, later events inserted in place), so the order is exactly
// EventBefore's.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "emulator/engine/event.h"

namespace ibemu::engine {

class EventQueue {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // The earliest event; only when not empty. Peeking may move the current bucket on to the next
  // one with events; the set of events does not change.
  const Event& top() {
    Settle();
    return current_[ncur_ - 1];
  }
  SimTime top_time() { return top().time; }
  // Whether the queue holds its few events in one sorted array rather than as a calendar (kSmall).
  bool small() const { return cur_ == kAllCurrent; }
  void Push(const Event& e);
  Event Pop();

 private:
  static constexpr int kBucketShift = 7;  // 128 ps per bucket
  static constexpr int64_t kBuckets = 32768;
  static constexpr int kWords = kBuckets / 64;

  // A queue of at most kSmall events (a fabric that is up but idle: an OpenSM sweep keeps one to
  // seven pending) holds them all in current_, sorted, with cur_ at kAllCurrent: each event
  // in the ring would sit alone in its bucket, and moving the current bucket on to it (the search
  // of the ring's bitmaps, a cold line of head_ and of nodes_, a sort of one) cost more than the
  // event's handler. It becomes a calendar again when a push would make it larger (CurrentFull).
  static constexpr size_t kSmall = 8;
  static constexpr int64_t kAllCurrent = INT64_MAX / 4;

  static int64_t BucketOf(SimTime t) { return t >> kBucketShift; }
  static size_t Index(int64_t bucket) { return static_cast<size_t>(bucket & (kBuckets - 1)); }
  // The current bucket moves on only when an event is wanted and it has none left, not as soon
  // as it empties: the handler of the event just popped posts its events while the current
  // bucket is still its own, so they go into the ring rather than, as events before a bucket
  // moved far ahead, into the sorted current bucket.
  void Settle() {
    if (ncur_ == 0 && size_ > 0) Advance();
  }
  // Makes the earliest non-empty bucket current (size_ > 0, the current bucket empty).
  void Advance();
  // Pushes e when current_ holds limit_ events: grows current_, or puts the events of a full
  // small queue back into the ring (or the far heap) before pushing e there.
  [[gnu::noinline, gnu::cold]] void CurrentFull(const Event& e);
  void Grow() {
    current_.resize(current_.empty() ? 64 : 2 * current_.size());
    limit_ = current_.size();
  }
  void MarkNonEmpty(size_t i) {
    nonempty_[i / 64] |= uint64_t{1} << (i % 64);
    summary_[i / 4096] |= uint64_t{1} << (i / 64 % 64);
  }
  void MarkEmpty(size_t i) {
    nonempty_[i / 64] &= ~(uint64_t{1} << (i % 64));
    if (nonempty_[i / 64] == 0) summary_[i / 4096] &= ~(uint64_t{1} << (i / 64 % 64));
  }
  // The first non-empty bucket slot at or after `pos` (no wrapping), or -1.
  int64_t FindFrom(size_t pos) const;
  // Puts e into the list of bucket b (cur_ < b < cur_ + kBuckets).
  void AddToRing(const Event& e, int64_t b);
  void FarPush(const Event& e);
  Event FarPop();
  // Appends to the current bucket, unordered. `e` must not be an element of current_ (a resize
  // would move it); callers pass events from the ring, the far heap or a handler.
  void AppendCurrent(const Event& e) {
    if (ncur_ == current_.size()) Grow();
    current_[ncur_++] = e;
  }

  static constexpr uint32_t kNil = UINT32_MAX;
  // A line each: at 56 bytes most nodes straddled two, and a bucket's list is read node by node.
  struct alignas(64) Node {
    Event e;
    uint32_t next;
  };

  // The current bucket's events, current_[0, ncur_), sorted latest first, with any event posted
  // for a time before it (never earlier than the clock, so still first). The count is kept apart
  // from the vector's size so that appending needs no call into the vector.
  std::vector<Event> current_;
  size_t ncur_ = 0;
  // How many events current_ may hold before a push must look further: its size, or kSmall while
  // the queue is small (cur_ == kAllCurrent).
  size_t limit_ = 0;
  // head_[Index(b)]: the list of bucket b's events for cur_ < b < cur_ + kBuckets, in nodes_.
  // Lists in one pool of nodes (a bucket's nodes freed together, reused before older ones)
  // rather than an array per bucket keep the memory the queue touches to about what is pending:
  // arrays per bucket kept their capacity, tens of megabytes over the ring, and cost more in
  // cache misses than they saved.
  std::vector<uint32_t> head_ = std::vector<uint32_t>(kBuckets, kNil);
  std::vector<Node> nodes_;
  uint32_t free_ = kNil;                     // unused nodes, linked through Node::next
  std::array<uint64_t, kWords> nonempty_{};  // buckets other than the current with events
  // Bit w: nonempty_[w] is not 0. A fabric that is up but idle has a handful of events spread over
  // the ring, and a scan of every word for each of them cost more than the events.
  std::array<uint64_t, kWords / 64> summary_{};
  std::vector<Event> far_;  // 4-ary heap: buckets from cur_ + kBuckets on
  // No bucket is current before the first pop or look at the top: what devices post as they start
  // (tens of thousands of events at time 0 on a large fabric) goes into bucket 0's list and is
  // sorted once when it becomes current, not inserted one by one into a sorted array, which was
  // quadratic.
  int64_t cur_ = -1;
  size_t size_ = 0;
};

}  // namespace ibemu::engine
