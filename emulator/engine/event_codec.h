// Compact framing of events that cross process boundaries. A batch is what one process sends
// another after each window of its conservative synchronisation:
//   u32 from_partition | i64 promise_ps | i64 need_ps | u32 ack | u32 count | count x frame
// A frame is fixed little-endian fields, then the packet if there is one, carrying the real IB
// header bytes (LRH, BTH, ...) exactly as they are on the wire:
//   u16 kind | u16 port | u32 lp | u32 src | u64 seq | i64 time | u32 a | u64 b | u8 flags
//   [packet: u8 hdr_len | hdr bytes | u32 payload_len | u32 flow | u64 id | i64 created |
//            i64 injected | u16 credit_class | (flags bit 1) 256 MAD bytes]
// The promise is the sender's guarantee that no later batch holds an event before that time, or,
// between processes joined by a bridge of the partition graph, before that time unless the event
// was caused by a batch the receiver sent after the first `ack` batches it sent
// (docs/architecture.md §7, "Bridges").
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/engine/event.h"

namespace ibemu::engine {

class BatchWriter {
 public:
  void Reset(uint32_t from);
  void Add(const Event& e);  // copies the packet bytes; the caller keeps the packet
  // Finishes the batch with its promise, the sender's need and acknowledgement; the bytes stay
  // valid until the next Reset.
  const std::string& Finish(SimTime promise, SimTime need, uint32_t ack);
  uint32_t count() const { return count_; }
  // The earliest event in the batch (INT64_MAX when it holds none).
  SimTime min_time() const { return min_time_; }

 private:
  std::string buf_;
  uint32_t count_ = 0;
  SimTime min_time_ = INT64_MAX;
};

struct Batch {
  uint32_t from = 0;
  SimTime promise = 0;
  // The sender can go on once the receiver's promises pass this time; until then it wants every
  // larger promise.
  SimTime need = 0;
  uint32_t ack = 0;  // how many batches from the receiver the sender had taken in
  uint32_t count = 0;
};

// Decodes a batch; packets come from `pool`. Returns false on a malformed batch.
bool DecodeBatch(const void* data, size_t len, PacketPool* pool, Batch* head,
                 std::vector<Event>* events);

}  // namespace ibemu::engine
