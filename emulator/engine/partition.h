// A partition: the set of LPs one OS process (or the whole fabric, embedded) runs, its event queue
// and its clock. Events for LPs held elsewhere go to a RemoteSink; conservative synchronisation
// (each neighbour's promise bounds how far RunUntil may go) lives in partitioned_runner.cc.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "emulator/engine/event_queue.h"
#include "emulator/engine/logical_process.h"

namespace ibemu::engine {

class RemoteSink {
 public:
  virtual ~RemoteSink() = default;
  // Takes ownership of e.pkt (serialises it, then the partition frees it).
  virtual void Send(const Event& e) = 0;
};

class Partition {
 public:
  explicit Partition(size_t total_lps) : lps_(total_lps, nullptr) {}

  void Add(LogicalProcess* lp);
  bool IsLocal(LpId id) const { return id < lps_.size() && lps_[id] != nullptr; }
  void SetRemote(RemoteSink* r) { remote_ = r; }

  SimTime now() const { return now_; }
  // Every event a handler posts passes here: inline, with the rare paths out of line.
  void Schedule(const Event& e) {
    if (e.time < now_) [[unlikely]]
      ThrowPast(e);
    if (IsLocal(e.lp)) [[likely]]
      queue_.Push(e);
    else
      SendRemote(e);
  }
  // Delivers an event that arrived from another partition.
  void Inject(const Event& e) { queue_.Push(e); }
  SimTime NextEventTime() const;  // INT64_MAX when empty
  // Handles every event with time < end, then sets the clock to end (if larger).
  void RunUntil(SimTime end);
  // Like RunUntil, but stops after `max_events` events, the clock at the last one handled, so a
  // partitioned run can trade news with its neighbours within a window. Returns whether it
  // reached `end`.
  bool RunSome(SimTime end, uint64_t max_events);
  void StartAll();

  PacketPool& pool() { return pool_; }
  uint64_t events() const { return events_; }

 private:
  void HandleNext();  // the earliest event
  [[noreturn]] void ThrowPast(const Event& e) const;
  void SendRemote(const Event& e);

  std::vector<LogicalProcess*> lps_;
  // Mutable: looking at the next event time may move the queue's current bucket on.
  mutable EventQueue queue_;
  PacketPool pool_;
  RemoteSink* remote_ = nullptr;
  SimTime now_ = 0;
  uint64_t events_ = 0;
};

}  // namespace ibemu::engine
