#include "emulator/fabric/shm_ring.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace ibemu::fabric {
namespace {

// A record is a 4-byte length, the bytes, padding to 8. A length of kWrap says "continue at the
// start of the buffer".
constexpr uint32_t kWrap = 0xFFFFFFFFu;

size_t Padded(size_t n) {
  return (4 + n + 7) & ~size_t{7};
}

long Futex(std::atomic<uint32_t>* addr, int op, uint32_t val, const timespec* ts) {
  // The word is shared between processes, so no FUTEX_PRIVATE_FLAG.
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(addr), op, val, ts, nullptr, 0);
}

}  // namespace

ShmMapping::ShmMapping(const std::string& path, size_t bytes) : bytes_(bytes) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  // Both sides size it the same; a new file reads as zeros, which is an empty ring.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    close(fd);
    throw std::runtime_error(path + ": " + std::strerror(err));
  }
  data_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (data_ == MAP_FAILED) {
    data_ = nullptr;
    throw std::runtime_error(path + ": mmap: " + std::strerror(errno));
  }
}

ShmMapping::~ShmMapping() {
  if (data_) munmap(data_, bytes_);
}

ShmMapping::ShmMapping(ShmMapping&& o) noexcept : data_(o.data_), bytes_(o.bytes_) {
  o.data_ = nullptr;
}

// Sequentially consistent on both sides: the writer's increment then load of `sleepers` and the
// reader's increment of `sleepers` then load of the count must not both miss the other.
void Doorbell::Ring() {
  d_->count.fetch_add(1, std::memory_order_seq_cst);
  if (d_->sleepers.load(std::memory_order_seq_cst) != 0)
    Futex(&d_->count, FUTEX_WAKE, INT32_MAX, nullptr);
}

void Doorbell::Wait(uint32_t seen, int timeout_ms) {
  d_->sleepers.fetch_add(1, std::memory_order_seq_cst);
  // The futex sleeps only if the count is still `seen`: a ring between the caller's last look
  // and here is not missed.
  timespec ts{timeout_ms / 1000, static_cast<long>(timeout_ms % 1000) * 1000000};
  if (d_->count.load(std::memory_order_seq_cst) == seen) Futex(&d_->count, FUTEX_WAIT, seen, &ts);
  d_->sleepers.fetch_sub(1, std::memory_order_seq_cst);
}

ShmRing::ShmRing(void* shared, size_t capacity)
    : h_(static_cast<Header*>(shared)),
      buf_(static_cast<uint8_t*>(shared) + sizeof(Header)),
      capacity_(capacity) {}

bool ShmRing::TryWrite(const void* data, size_t len) {
  if (len > max_message()) throw std::length_error("a batch larger than the shared ring");
  uint64_t head = h_->head.load(std::memory_order_relaxed);
  uint64_t tail = h_->tail.load(std::memory_order_acquire);
  size_t at = static_cast<size_t>(head % capacity_);
  size_t need = Padded(len);
  size_t to_end = capacity_ - at;
  // A record never straddles the end: if it does not fit before it, the rest of the buffer is
  // skipped with a wrap marker (which needs 4 bytes, always there since records are 8-aligned).
  size_t skip = need > to_end ? to_end : 0;
  if (head + skip + need - tail > capacity_) return false;
  if (skip) {
    std::memcpy(buf_ + at, &kWrap, 4);
    at = 0;
  }
  uint32_t n = static_cast<uint32_t>(len);
  std::memcpy(buf_ + at, &n, 4);
  std::memcpy(buf_ + at + 4, data, len);
  h_->head.store(head + skip + need, std::memory_order_release);
  return true;
}

size_t ShmRing::Drain(const std::function<void(const void*, size_t)>& take) {
  uint64_t tail = h_->tail.load(std::memory_order_relaxed);
  uint64_t head = h_->head.load(std::memory_order_acquire);
  size_t count = 0;
  while (tail != head) {
    size_t at = static_cast<size_t>(tail % capacity_);
    uint32_t n;
    std::memcpy(&n, buf_ + at, 4);
    if (n == kWrap) {
      tail += capacity_ - at;
      continue;
    }
    take(buf_ + at + 4, n);
    tail += Padded(n);
    ++count;
    // Space is handed back per message, so a producer waiting for room goes on at once.
    h_->tail.store(tail, std::memory_order_release);
  }
  return count;
}

bool ShmRing::Empty() const {
  return h_->tail.load(std::memory_order_relaxed) == h_->head.load(std::memory_order_acquire);
}

}  // namespace ibemu::fabric
