// The same-host transport between partition processes: one single-producer, single-consumer ring
// of messages in shared memory per direction, and one doorbell per receiving process.
//
// Why not ZeroMQ here: a partitioned run exchanges a batch for nearly every lookahead window, and
// through ZeroMQ each batch crosses the sender's and the receiver's I/O threads (four thread
// wake-ups and several system calls). Through a ring the sender's store is the receiver's load: a
// receiver that is waiting spins briefly and then sleeps on the doorbell's futex, and the sender
// wakes it only if it sleeps. Across hosts (tcp) ZeroMQ carries the batches as before.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ibemu::fabric {

// A file in the run's directory, mapped by both processes; either may create it.
class ShmMapping {
 public:
  ShmMapping() = default;
  ShmMapping(const std::string& path, size_t bytes);  // throws with the path on failure
  ~ShmMapping();
  ShmMapping(ShmMapping&& o) noexcept;
  ShmMapping& operator=(ShmMapping&&) = delete;
  ShmMapping(const ShmMapping&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A process's doorbell: rung after every message written into one of its rings.
class Doorbell {
 public:
  explicit Doorbell(void* shared) : d_(static_cast<Shared*>(shared)) {}
  static size_t Bytes() { return sizeof(Shared); }
  // The writer, after a message is in the ring.
  void Ring();
  // The reader: the ring count now, to wait on.
  uint32_t Count() const { return d_->count.load(std::memory_order_acquire); }
  // Sleeps until the count differs from `seen` or `timeout_ms` passes.
  void Wait(uint32_t seen, int timeout_ms);

 private:
  struct Shared {
    std::atomic<uint32_t> count{0};
    std::atomic<uint32_t> sleepers{0};
  };
  Shared* d_;
};

class ShmRing {
 public:
  // `shared` is Bytes(capacity) bytes of shared memory, zeroed when first mapped.
  ShmRing(void* shared, size_t capacity);
  static size_t Bytes(size_t capacity) { return sizeof(Header) + capacity; }
  // The producer: false when the message does not fit now (the consumer has not read enough).
  bool TryWrite(const void* data, size_t len);
  // The largest message that can ever fit.
  size_t max_message() const { return capacity_ / 2 - 8; }
  // The consumer: hands each waiting message to `take` (the bytes are valid during the call);
  // returns how many.
  size_t Drain(const std::function<void(const void*, size_t)>& take);
  bool Empty() const;

 private:
  struct Header {
    alignas(64) std::atomic<uint64_t> head{0};  // bytes written, ever
    alignas(64) std::atomic<uint64_t> tail{0};  // bytes read, ever
  };
  Header* h_;
  uint8_t* buf_;
  size_t capacity_;
};

}  // namespace ibemu::fabric
