// A logical process: one device (switch or HCA). It sees the world only through the events it
// handles and the events it posts, so it can live in any partition.
#pragma once
#include <cstdint>

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
  // Called once when the run starts, before any event.
  virtual void Start() {}
  uint64_t digest() const { return digest_.value(); }
  uint64_t events_handled() const { return events_; }

  void Attach(Partition* p) { part_ = p; }
  void Account(const Event& e);

 protected:
  SimTime now() const;
  // Posts an event to `target` (this LP or a link peer); time must not be in the past.
  void Post(LpId target, SimTime t, uint16_t kind, uint16_t port = 0, uint32_t a = 0,
            uint64_t b = 0, Packet* pkt = nullptr);
  Packet* NewPacket();
  void FreePacket(Packet* p);
  uint64_t NextPacketId() { return uint64_t{id_} << 40 | packet_counter_++; }
  Partition* partition() const { return part_; }

 private:
  LpId id_;
  Partition* part_ = nullptr;
  uint64_t seq_ = 0;
  uint64_t packet_counter_ = 0;
  uint64_t events_ = 0;
  Digest digest_;
};

}  // namespace ibemu::engine
