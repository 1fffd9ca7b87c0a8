// The calendar event queue must pop in exactly EventBefore's order: ties in time broken by target
// LP, source LP and sequence; events beyond the ring's horizon; events posted before the current
// bucket once the queue has looked ahead; and a queue that drains and refills.
#include "emulator/engine/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace ibemu::engine {
namespace {

Event Ev(SimTime t, LpId lp, LpId src, uint64_t seq) {
  Event e;
  e.time = t;
  e.lp = lp;
  e.src = src;
  e.seq = seq;
  e.a = static_cast<uint32_t>(seq);
  return e;
}

// Pops everything and checks it against a sorted copy of what was pushed.
void ExpectDrainsInOrder(EventQueue& q, std::vector<Event> pushed) {
  std::sort(pushed.begin(), pushed.end(), EventBefore);
  ASSERT_EQ(q.size(), pushed.size());
  for (const Event& want : pushed) {
    ASSERT_FALSE(q.empty());
    EXPECT_EQ(q.top_time(), want.time);
    Event got = q.Pop();
    ASSERT_EQ(got.time, want.time);
    ASSERT_EQ(got.lp, want.lp);
    ASSERT_EQ(got.src, want.src);
    ASSERT_EQ(got.seq, want.seq);
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, TiesInTimeGoByTargetThenSourceThenSequence) {
  EventQueue q;
  std::vector<Event> v{Ev(500, 3, 1, 7), Ev(500, 2, 9, 1), Ev(500, 3, 1, 2), Ev(500, 3, 0, 9),
                       Ev(499, 8, 8, 8)};
  for (const Event& e : v) q.Push(e);
  Event first = q.Pop();
  EXPECT_EQ(first.time, 499);
  Event second = q.Pop();
  EXPECT_EQ(second.lp, 2u);
  Event third = q.Pop();
  EXPECT_EQ(third.src, 0u);
  Event fourth = q.Pop();
  EXPECT_EQ(fourth.seq, 2u);
  EXPECT_EQ(q.Pop().seq, 7u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, FarEventsComeAfterNearOnesAndInOrder) {
  EventQueue q;
  // Seconds apart: all but the first are far beyond the ring.
  std::vector<Event> v{Ev(0, 1, 1, 0), Ev(2'000'000'000'000, 1, 1, 1), Ev(1'000'000'000, 1, 1, 2),
                       Ev(1'000'000'000, 0, 1, 3), Ev(5'000'000, 1, 1, 4)};
  for (const Event& e : v) q.Push(e);
  ExpectDrainsInOrder(q, v);
}

// What devices post as they start: thousands of events at time 0, in increasing LP order (each
// the latest so far), plus the edges of the ring as seen before any bucket is current: the last
// bucket the ring holds and the first beyond it. Then events pushed into the current bucket.
TEST(EventQueue, EventsPushedBeforeTheFirstPopComeOutInOrder) {
  EventQueue q;
  std::vector<Event> v;
  constexpr SimTime kBucket = 128;
  constexpr SimTime kRing = 32768 * kBucket;
  for (LpId lp = 0; lp < 5000; ++lp) v.push_back(Ev(0, lp, lp, lp));
  v.push_back(Ev(kRing - 2 * kBucket, 1, 1, 6000));  // the last bucket in the ring
  v.push_back(Ev(kRing - kBucket, 1, 1, 6001));      // the first bucket past it
  v.push_back(Ev(kRing, 1, 1, 6002));
  v.push_back(Ev(kBucket - 1, 0, 0, 6003));  // bucket 0, after every time-0 event
  for (const Event& e : v) q.Push(e);
  ASSERT_EQ(q.Pop().lp, 0u);
  // Now bucket 0 is current: a late arrival for time 0 goes into it, ordered.
  Event late = Ev(0, 4999, 0, 7000);
  q.Push(late);
  v.erase(v.begin());
  v.push_back(late);
  ExpectDrainsInOrder(q, v);
}

// A queue beside a plain list of what it holds: each pop must be the list's earliest event.
class Reference {
 public:
  explicit Reference(EventQueue& q) : q_(q) {}
  size_t pending() const { return pending_.size(); }
  void Push(SimTime ahead, LpId lp, LpId src) {
    Event e = Ev(now_ + ahead, lp, src, seq_++);
    q_.Push(e);
    pending_.push_back(e);
  }
  ::testing::AssertionResult PopMatches() {
    auto it = std::min_element(pending_.begin(), pending_.end(), EventBefore);
    if (q_.top_time() != it->time)
      return ::testing::AssertionFailure() << "top at " << q_.top_time() << ", want " << it->time;
    Event got = q_.Pop();
    if (got.seq != it->seq)
      return ::testing::AssertionFailure() << "popped seq " << got.seq << ", want " << it->seq;
    now_ = got.time;
    pending_.erase(it);
    return ::testing::AssertionSuccess();
  }
  // A look at the next event, then an event at the clock (before it, or tied with it): what a
  // partition sees when a neighbour's event arrives after it looked ahead.
  void PeekThenPushAtTheClock(LpId lp, LpId src) {
    if (!pending_.empty()) q_.top_time();
    Push(0, lp, src);
  }
  void Drain() { ExpectDrainsInOrder(q_, pending_); }

 private:
  EventQueue& q_;
  std::vector<Event> pending_;
  SimTime now_ = 0;
  uint64_t seq_ = 0;
};

TEST(EventQueue, RandomInterleavedPushesAndPopsMatchASortedReference) {
  std::mt19937_64 rng(42);
  EventQueue q;
  Reference ref(q);
  for (int step = 0; step < 200000; ++step) {
    if (ref.pending() == 0 || rng() % 100 < 52) {
      // Mostly a few ns ahead, sometimes now, sometimes microseconds or far beyond the ring;
      // coarse times so ties are common.
      SimTime ahead;
      switch (rng() % 8) {
        case 0:
          ahead = 0;
          break;
        case 1:
          ahead = static_cast<SimTime>(rng() % 50'000'000);
          break;
        case 2:
          ahead = static_cast<SimTime>(rng() % 20'000) * 250;
          break;
        default:
          ahead = static_cast<SimTime>(rng() % 40) * 250;
      }
      ref.Push(ahead, static_cast<LpId>(rng() % 5), static_cast<LpId>(rng() % 5));
    } else {
      ASSERT_TRUE(ref.PopMatches()) << "step " << step;
    }
  }
  ref.Drain();
}

// A queue of a few events keeps them all in one sorted array and becomes a calendar again when it
// grows (EventQueue::kSmall, 8): pending counts that hover around that size cross it both ways
// hundreds of times, with events near, beyond the ring (4.2 us) and at the clock.
TEST(EventQueue, AQueueThatGrowsAndShrinksAcrossTheSmallSizeStaysInOrder) {
  std::mt19937_64 rng(7);
  EventQueue q;
  Reference ref(q);
  int crossings = 0;  // changes of the queue's way of holding its events
  bool was_small = q.small();
  for (int step = 0; step < 300000; ++step) {
    // Drift between about 2 and 14 pending, in runs, so both sizes last a while.
    size_t want = (step / 500) % 2 ? 12 : 3;
    if (rng() % 10 == 0) {
      ref.PeekThenPushAtTheClock(static_cast<LpId>(rng() % 3), static_cast<LpId>(rng() % 3));
    } else if (ref.pending() == 0 || rng() % 100 < (ref.pending() < want ? 70u : 30u)) {
      SimTime ahead;
      switch (rng() % 6) {
        case 0:
          ahead = 0;
          break;
        case 1:
          ahead = static_cast<SimTime>(rng() % 10'000'000);
          break;
        default:
          ahead = static_cast<SimTime>(rng() % 64) * 100;
      }
      ref.Push(ahead, static_cast<LpId>(rng() % 3), static_cast<LpId>(rng() % 3));
    } else {
      ASSERT_TRUE(ref.PopMatches()) << "step " << step;
    }
    crossings += q.small() != was_small;
    was_small = q.small();
    if (q.small()) {
      ASSERT_LE(q.size(), 8u);
    }
  }
  EXPECT_GT(crossings, 200);
  ref.Drain();
}

TEST(EventQueue, AnEventBeforeTheBucketTheQueueLookedAheadToComesFirst) {
  // The partition peeks at the next event (far ahead), then an event arrives from another
  // partition at an earlier time that is still not before its clock. First as a calendar (more
  // events than a small queue holds, each in a bucket of its own), the current bucket moved on
  // to the first of them by the peek.
  {
    EventQueue q;
    std::vector<Event> v;
    for (uint64_t k = 0; k < 12; ++k) v.push_back(Ev(10'000'000 + SimTime(k) * 1000, 1, 1, k));
    for (const Event& e : v) q.Push(e);
    EXPECT_EQ(q.top_time(), 10'000'000);
    ASSERT_FALSE(q.small());
    v.push_back(Ev(2'000, 1, 2, 100));
    v.push_back(Ev(9'999'999, 0, 2, 101));
    q.Push(v[v.size() - 2]);
    q.Push(v.back());
    EXPECT_EQ(q.top_time(), 2'000);
    ExpectDrainsInOrder(q, v);
  }
  // Then as a small queue.
  EventQueue q;
  q.Push(Ev(10'000'000, 1, 1, 0));
  EXPECT_EQ(q.top_time(), 10'000'000);
  q.Push(Ev(2'000, 1, 2, 0));
  q.Push(Ev(9'999'999, 0, 2, 1));
  EXPECT_EQ(q.Pop().time, 2'000);
  EXPECT_EQ(q.Pop().time, 9'999'999);
  EXPECT_EQ(q.Pop().time, 10'000'000);
  EXPECT_TRUE(q.empty());
  // Drained, it takes events again from any time on.
  q.Push(Ev(20'000'000, 0, 0, 5));
  q.Push(Ev(20'000'000 + 4'200'000, 0, 0, 6));
  EXPECT_EQ(q.Pop().seq, 5u);
  EXPECT_EQ(q.Pop().seq, 6u);
}

}  // namespace
}  // namespace ibemu::engine
