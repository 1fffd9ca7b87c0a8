// The shared-memory rings between partition processes on one host: messages come out whole and
// in order across the buffer's end, a full ring refuses a write until the reader has read, and a
// writer in another process wakes a reader asleep on its doorbell.
#include "emulator/fabric/shm_ring.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace ibemu::fabric {
namespace {

struct TempFile {
  std::string path =
      "/tmp/ibemu-shm-ring-test-" + std::to_string(getpid()) + "-" + std::to_string(std::rand());
  ~TempFile() { std::filesystem::remove(path); }
};

std::vector<std::string> DrainAll(ShmRing& r) {
  std::vector<std::string> got;
  r.Drain([&](const void* d, size_t n) { got.emplace_back(static_cast<const char*>(d), n); });
  return got;
}

TEST(ShmRing, MessagesComeOutWholeAndInOrderAcrossTheEnd) {
  TempFile f;
  constexpr size_t kCap = 256;
  ShmMapping m(f.path, ShmRing::Bytes(kCap));
  ShmRing w(m.data(), kCap), r(m.data(), kCap);
  EXPECT_TRUE(r.Empty());
  EXPECT_EQ(w.max_message(), kCap / 2 - 8);
  // Messages of 37, 1 and 60 bytes (records of 48, 8 and 64), each written while the reader is
  // still handling the one before, so the ring is never empty when written to and the records
  // go round the buffer, meeting its end at different places.
  const size_t lengths[] = {37, 1, 60};
  auto message = [&](int i) {
    return std::string(lengths[i % 3], static_cast<char>('a' + i % 26));
  };
  constexpr int kMessages = 40;
  std::vector<std::string> got;
  int written = 0;
  ASSERT_TRUE(w.TryWrite(message(0).data(), message(0).size()));
  ++written;
  while (got.size() < kMessages) {
    size_t n = r.Drain([&](const void* d, size_t len) {
      got.emplace_back(static_cast<const char*>(d), len);
      if (written < kMessages) {
        std::string next = message(written);
        ASSERT_TRUE(w.TryWrite(next.data(), next.size())) << written;
        ++written;
      }
    });
    ASSERT_GT(n, 0u);
  }
  for (int i = 0; i < kMessages; ++i) EXPECT_EQ(got[i], message(i)) << i;
  EXPECT_TRUE(r.Empty());
}

TEST(ShmRing, AFullRingRefusesUntilTheReaderHasRead) {
  TempFile f;
  constexpr size_t kCap = 128;
  ShmMapping m(f.path, ShmRing::Bytes(kCap));
  ShmRing ring(m.data(), kCap);
  std::string msg(28, 'q');  // a 32-byte record: four fill the ring
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring.TryWrite(msg.data(), msg.size())) << i;
  EXPECT_FALSE(ring.TryWrite(msg.data(), msg.size()));
  EXPECT_EQ(DrainAll(ring).size(), 4u);
  EXPECT_TRUE(ring.TryWrite(msg.data(), msg.size()));
  std::string big(ring.max_message() + 1, 'b');
  EXPECT_THROW(ring.TryWrite(big.data(), big.size()), std::length_error);
}

TEST(ShmRing, AWriterInAnotherProcessWakesASleepingReader) {
  TempFile ring_file, bell_file;
  constexpr size_t kCap = 4096;
  ShmMapping rm(ring_file.path, ShmRing::Bytes(kCap));
  ShmMapping bm(bell_file.path, Doorbell::Bytes());
  ShmRing ring(rm.data(), kCap);
  Doorbell bell(bm.data());
  uint32_t seen = bell.Count();
  pid_t child = fork();
  if (child == 0) {
    // Its own mappings of the same files, as a neighbour process has.
    ShmMapping crm(ring_file.path, ShmRing::Bytes(kCap));
    ShmMapping cbm(bell_file.path, Doorbell::Bytes());
    ShmRing cring(crm.data(), kCap);
    Doorbell cbell(cbm.data());
    usleep(200000);
    const char hello[] = "hello";
    bool ok = cring.TryWrite(hello, 5);
    cbell.Ring();
    _exit(ok ? 0 : 1);
  }
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(ring.Empty());
  bell.Wait(seen, 5000);  // asleep until the child rings
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GT(waited, 0.1);
  EXPECT_LT(waited, 4.0);
  EXPECT_EQ(DrainAll(ring), std::vector<std::string>{"hello"});
  int st = 0;
  waitpid(child, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  // A ring before the wait is not missed: the count has moved on, so no sleep at all.
  t0 = std::chrono::steady_clock::now();
  bell.Wait(seen, 2000);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 1.0);
}

}  // namespace
}  // namespace ibemu::fabric
