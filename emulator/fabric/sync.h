// Conservative synchronisation of one partition with its neighbours (docs/architecture.md §7):
// what each neighbour has promised, what this process sent it that it has not yet acknowledged,
// how far this process may run, and what it may promise.
//
// Two kinds of promise. Across a cable bundle that is not a bridge of the partition graph a
// promise is unconditional: no later event from the sender is earlier. Across a bridge every
// consequence of the receiver's own events comes back over that same bundle, so the sender promises
// only about the rest, "unless you caused it": the receiver bounds what it caused itself from the
// events it sent (not yet acknowledged) and from its own next event plus the round trip. An idle
// host then holds its switch back only while it has something of its own to do, instead of at
// every lookahead.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::fabric {

using link::SimTime;

class Sync {
 public:
  static constexpr SimTime kUnknown = -1;
  struct Neighbour {
    uint32_t q = 0;
    bool bridge = false;
    SimTime la_out = 0;      // least time from an event here to one it causes at q
    SimTime la_in = 0;       // and back
    SimTime promise_in = 0;  // q's last promise
    uint32_t got = 0;        // batches received from q
    // The earliest event in the batches from q since the last batch sent to q (INT64_MAX if
    // none): q counts what it caused here until it learns they arrived.
    SimTime owed_min = INT64_MAX;
    uint32_t sent = 0;      // batches sent to q
    uint32_t ack_sent = 0;  // the acknowledgement in the last batch sent to q
    SimTime promised = -1;  // the promise in the last batch sent to q
    // q goes on once promises pass need_in (INT64_MAX: it needs none); it was last told that
    // this process needs need_sent.
    SimTime need_in = kUnknown;
    SimTime need_sent = -1;
    // Batches with events sent to q (number, earliest event) that q has not acknowledged.
    std::deque<std::pair<uint32_t, SimTime>> pending;
  };

  // `la[p][q]`: the lookahead from partition p to q, INT64_MAX where no cable joins them.
  Sync(const std::vector<std::vector<SimTime>>& la, uint32_t self, SimTime duration);

  std::vector<Neighbour>& neighbours() { return nbrs_; }
  bool IsNeighbour(uint32_t q) const { return q < index_.size() && index_[q] >= 0; }

  // How far this process may run, given its next event and its clock.
  SimTime Bound(SimTime next, SimTime now) const;
  // Events waiting to go to a neighbour: how many, and the earliest.
  struct Waiting {
    uint32_t count = 0;
    SimTime min_time = INT64_MAX;
  };
  // Calls `send(nb, promise, need, ack)` for every neighbour that has events waiting
  // (`waiting(q)`), is owed an acknowledgement, waits for a larger promise than it had, or must
  // learn that this process waits for one.
  void Promises(SimTime next,
                const std::function<void(Neighbour&, SimTime, SimTime, uint32_t)>& send,
                const std::function<Waiting(uint32_t)>& waiting);
  // A batch went to nb: `count` events, the earliest at `min_time`.
  void Sent(Neighbour& nb, uint32_t count, SimTime min_time);
  // One line per neighbour: what it promised and needs, what is unacknowledged (for
  // IBEMU_TRACE_SYNC).
  std::string Describe() const;
  // A batch came from q: `count` events, the earliest at `min_time`.
  void Received(uint32_t q, SimTime promise, SimTime need, uint32_t ack, uint32_t count,
                SimTime min_time);

 private:
  // The earliest event that can still come from nb, leaving out what this process's future
  // batches will cause.
  SimTime Horizon(const Neighbour& nb) const;

  std::vector<Neighbour> nbrs_;
  std::vector<int> index_;  // partition -> position in nbrs_, -1 if not a neighbour
  std::vector<Waiting> waiting_;
  std::vector<SimTime> horizon_;  // Promises: each neighbour's horizon, the batch to go counted
  SimTime duration_;
  // The smallest lookahead towards a neighbour joined by no bridge (INT64_MAX if none).
  SimTime step_ = INT64_MAX;
  // The shortest round trip across a bridge (INT64_MAX if none).
  SimTime round_trip_ = INT64_MAX;
};

// Whether the cables between `self` and `q` are a bridge of the partition graph: without them
// nothing in q's side could reach `self`.
bool IsBridge(const std::vector<std::vector<SimTime>>& la, uint32_t self, uint32_t q);

}  // namespace ibemu::fabric
