// A logical process: one device (switch or HCA). It sees the world only through the events it
// handles and the events it posts, so it can live in any partition.
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>

#include "emulator/engine/digest.h"
#include "emulator/engine/event.h"

namespace ibemu::engine {

class Partition;

class LogicalProcess {
 public:
  explicit LogicalProcess(LpId id) : id_(id) {}
  virtual ~LogicalProcess() = default;
  LpId id() const { return id_; }
  virtual void Handle(const Event& e) = 0;
  // Called by the partition before and after each event this LP handles while it asks for them
  // (set_event_hooks): for an LP that looks at its state between its events, which in Handle
  // itself would cost every event of every LP a check (and after its handler, the handler's tail
  // calls). BeforeEvent comes before the event is accounted.
  virtual void BeforeEvent(const Event& e) {}
  virtual void AfterEvent() {}
  bool event_hooks() const { return event_hooks_; }
  // Called once when the run starts, before any event.
  virtual void Start() {}
  uint64_t digest() const { return digest_.value(); }
  uint64_t events_handled() const { return events_; }

  // `clock` is the partition's: read for every now(), which handlers ask for all the time.
  void Attach(Partition* p, const SimTime* clock) {
    part_ = p;
    clock_ = clock;
  }
  // Folds a handled event into the digest (docs/architecture.md §1).
  void Account(const Event& e) {
    ++events_;
    Fold(e);
  }

 protected:
  // Folds into the digest, where it stands in this LP's sequence of events, an event that the
  // LP knows it would have handled to no effect and so spared (link::Device's wake-ups after
  // SMPs): the digest stays that of the model, whichever events the implementation spares.
  void Fold(const Event& e) {
    digest_.Add(static_cast<uint64_t>(e.time));
    digest_.Add(uint64_t{e.kind} << 48 | uint64_t{e.port} << 32 | e.a);
    digest_.Add(e.b);
    if (e.pkt) {
      digest_.Add(e.pkt->id);
      // The LRH (VL, SL, DLID, SLID) as one big-endian word.
      uint64_t h;
      std::memcpy(&h, e.pkt->hdr.data(), sizeof h);
      if constexpr (std::endian::native == std::endian::little) h = __builtin_bswap64(h);
      digest_.Add(h);
    }
  }

  SimTime now() const { return *clock_; }
  // Posts an event to `target` (this LP or a link peer); time must not be in the past.
  void Post(LpId target, SimTime t, uint16_t kind, uint16_t port = 0, uint32_t a = 0,
            uint64_t b = 0, Packet* pkt = nullptr);
  // The sequence number a Post now would take, for an event posted later with PostReserved: it
  // keeps the place among this LP's events of one instant that a Post now would have given it.
  uint64_t ReserveSeq() { return seq_++; }
  void PostReserved(uint64_t seq, LpId target, SimTime t, uint16_t kind, uint16_t port = 0,
                    uint32_t a = 0, uint64_t b = 0, Packet* pkt = nullptr);
  // Posts to this LP, with a number reserved earlier, an event that is not counted in
  // self_posts(): it takes the place it would have had when the number was reserved, so it can
  // come between nothing that self_posts() guards.
  void PostReservedToSelf(uint64_t seq, SimTime t, uint16_t kind, uint16_t port = 0) {
    PostReserved(seq, id_, t, kind, port);
    --self_posts_;
  }
  void set_event_hooks(bool on) { event_hooks_ = on; }
  // Events this LP has posted to itself; equal at two reads, it posted none to itself between.
  uint64_t self_posts() const { return self_posts_; }
  Packet* NewPacket();
  void FreePacket(Packet* p);
  uint64_t NextPacketId() { return uint64_t{id_} << 40 | packet_counter_++; }
  Partition* partition() const { return part_; }

 private:
  LpId id_;
  bool event_hooks_ = false;  // beside id_, in the line Account writes at every event
  Partition* part_ = nullptr;
  const SimTime* clock_ = nullptr;
  uint64_t seq_ = 0;
  uint64_t self_posts_ = 0;
  uint64_t packet_counter_ = 0;
  uint64_t events_ = 0;
  Digest digest_;
};

}  // namespace ibemu::engine
