// The conservative synchronisation's bookkeeping (emulator/fabric/sync.{h,cc}): which cables are
// bridges, what a process may promise across them, how far it may run while its own batches are
// unacknowledged, and when a promise is worth a message. The partitioned runs' digests
// (tests/integration/partitions_test.cc) check the whole; these pin each rule.
#include "emulator/fabric/sync.h"

#include <gtest/gtest.h>

#include <map>

#include "emulator/engine/event_codec.h"

namespace ibemu::fabric {
namespace {

constexpr SimTime kMax = INT64_MAX;

// n partitions, lookahead `l` both ways on each listed pair.
std::vector<std::vector<SimTime>> Graph(size_t n, std::vector<std::pair<int, int>> edges,
                                        SimTime l) {
  std::vector<std::vector<SimTime>> la(n, std::vector<SimTime>(n, kMax));
  for (auto [a, b] : edges) la[a][b] = la[b][a] = l;
  return la;
}

struct Sent {
  SimTime promise, need;
  uint32_t ack;
};

// Runs Promises with nothing waiting to go; returns what went to whom.
std::map<uint32_t, Sent> Promise(Sync& s, SimTime next) {
  std::map<uint32_t, Sent> out;
  s.Promises(
      next,
      [&](Sync::Neighbour& nb, SimTime p, SimTime need, uint32_t ack) {
        out[nb.q] = {p, need, ack};
        s.Sent(nb, 0, kMax);
      },
      [](uint32_t) { return Sync::Waiting{}; });
  return out;
}

TEST(Sync, ATreeIsAllBridgesAndACycleHasNone) {
  // 0 - 1 - 2, 1 - 3: a tree.
  auto tree = Graph(4, {{0, 1}, {1, 2}, {1, 3}}, 10);
  EXPECT_TRUE(IsBridge(tree, 0, 1));
  EXPECT_TRUE(IsBridge(tree, 1, 2));
  EXPECT_TRUE(IsBridge(tree, 1, 3));
  // A triangle 0 - 1 - 2 - 0 with a tail 2 - 3.
  auto cyc = Graph(4, {{0, 1}, {1, 2}, {2, 0}, {2, 3}}, 10);
  EXPECT_FALSE(IsBridge(cyc, 0, 1));
  EXPECT_FALSE(IsBridge(cyc, 2, 0));
  EXPECT_TRUE(IsBridge(cyc, 2, 3));
  EXPECT_TRUE(IsBridge(cyc, 3, 2));
}

TEST(Sync, ABridgePromiseLeavesTheReceiversOwnHorizonOut) {
  // A switch (1) between two hosts (0, 2), lookahead 10 each way.
  auto la = Graph(3, {{0, 1}, {1, 2}}, 10);
  Sync sw(la, 1, 1'000'000);
  // Host 0 promises 500 (its own next event 490), host 2 promises 9000.
  sw.Received(0, 500, Sync::kUnknown, 0, 0, kMax);
  sw.Received(2, 9000, Sync::kUnknown, 0, 0, kMax);
  auto sent = Promise(sw, /*next=*/kMax);
  // To host 0: host 2's horizon only, 9000 + 10. To host 2: host 0's, 500 + 10.
  EXPECT_EQ(sent.at(0).promise, 9010);
  EXPECT_EQ(sent.at(2).promise, 510);
}

TEST(Sync, UnacknowledgedEventsAndTheRoundTripBoundTheRun) {
  auto la = Graph(2, {{0, 1}}, 10);
  Sync p(la, 0, 1'000'000);
  p.Received(1, 5000, kMax, 0, 0, kMax);  // 1's own events are at 4990 or later
  // With its next event at 100, p may run to 100 + the round trip (20): what it sends then can
  // come back no sooner.
  EXPECT_EQ(p.Bound(100, 0), 120);
  // p sends an event for time 300; until 1 acknowledges it, an answer may come at 310.
  Sync::Neighbour& nb = p.neighbours()[0];
  p.Sent(nb, 1, 300);
  EXPECT_EQ(p.Bound(400, 120), 310);
  // An acknowledgement of an older batch changes nothing; of this one, frees the bound.
  p.Received(1, 5000, kMax, 0, 0, kMax);
  EXPECT_EQ(p.Bound(400, 120), 310);
  p.Received(1, 5000, kMax, 1, 0, kMax);
  EXPECT_EQ(p.Bound(400, 120), 420);
}

TEST(Sync, APromiseGoesWhenItFirstPassesTheNeighboursNeed) {
  auto la = Graph(2, {{0, 1}}, 10);
  Sync p(la, 0, 1'000'000);
  // The first promise always goes (the neighbour's need is not known yet).
  EXPECT_EQ(Promise(p, 100).at(1).promise, 110);
  // 1 needs a promise above 500 (its next event).
  p.Received(1, 600, 500, 1, 0, kMax);
  // 310 does not let it go on; p writes only to say it needs 1's promises up to the end of the
  // run (its own next event, 300, is below what 1 promised).
  auto first = Promise(p, 300);
  EXPECT_EQ(first.at(1).need, 1'000'000 - 1);
  EXPECT_TRUE(Promise(p, 450).empty());  // nor 460
  EXPECT_EQ(Promise(p, 495).at(1).promise, 505);
  // 1 has not asked for more; but its 600 is now short of p's next event (700), and p says so.
  auto later = Promise(p, 700);
  EXPECT_EQ(later.at(1).need, 700);
  EXPECT_EQ(later.at(1).promise, 710);
  // The promise that reaches the end of the run always goes.
  EXPECT_EQ(Promise(p, kMax).at(1).promise, kMax);
}

TEST(Sync, AProcessSaysWhatItNeedsWhenItChangedAndIsShort) {
  auto la = Graph(2, {{0, 1}}, 10);
  Sync p(la, 0, 1'000'000);
  Promise(p, 100);
  p.Received(1, 200, kMax, 1, 0, kMax);  // 1 promised 200
  // p's next event is at 300: it needs 1's horizon past 300 and says so, once.
  auto sent = Promise(p, 300);
  ASSERT_EQ(sent.count(1), 1u);
  EXPECT_EQ(sent.at(1).need, 300);
  EXPECT_TRUE(Promise(p, 300).empty());
}

TEST(Sync, ABatchWithEventsIsAcknowledgedWhenItHoldsTheSenderBack) {
  auto la = Graph(2, {{0, 1}}, 10);
  Sync p(la, 0, 1'000'000);
  Promise(p, 100);
  // 1 sent an event at 150 and needs a promise above 400: the event holds it below 160, so the
  // acknowledgement goes.
  p.Received(1, 160, 400, 0, 1, 150);
  auto sent = Promise(p, 1000);
  ASSERT_EQ(sent.count(1), 1u);
  EXPECT_EQ(sent.at(1).ack, 1u);
  // An event at 450 does not hold it back below its need: no message for it alone.
  p.Received(1, 460, 400, 1, 1, 450);
  EXPECT_TRUE(Promise(p, 1000).empty());
}

TEST(Sync, TheBatchHeaderCarriesPromiseNeedAndAcknowledgement) {
  engine::BatchWriter w;
  w.Reset(3);
  engine::Event e;
  e.time = 777;
  e.lp = 5;
  w.Add(e);
  EXPECT_EQ(w.min_time(), 777);
  std::string b = w.Finish(1234, 999, 42);
  engine::PacketPool pool;
  engine::Batch head;
  std::vector<engine::Event> out;
  ASSERT_TRUE(engine::DecodeBatch(b.data(), b.size(), &pool, &head, &out));
  EXPECT_EQ(head.from, 3u);
  EXPECT_EQ(head.promise, 1234);
  EXPECT_EQ(head.need, 999);
  EXPECT_EQ(head.ack, 42u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].time, 777);
  // A header cut short is refused.
  EXPECT_FALSE(engine::DecodeBatch(b.data(), 20, &pool, &head, &out));
}

}  // namespace
}  // namespace ibemu::fabric
