// Link-level credit accounting (emulator/link/credits.h) in IBA 7.9.4's 12-bit arithmetic.
#include "emulator/link/credits.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>

namespace ibemu::link {
namespace {

// A transmitter whose peer has advertised room for `room` blocks beyond what was already sent.
TxCredits WithRoom(uint64_t blocks_sent, uint32_t room) {
  TxCredits t;
  t.blocks_sent = blocks_sent;
  t.fccl = static_cast<uint16_t>((blocks_sent + room) & 0xFFF);
  return t;
}

TEST(TxCredits, FitsExactlyUpToTheAdvertisedRoom) {
  for (uint32_t room : {0u, 1u, 5u, 64u, 2047u, 2048u}) {
    TxCredits t = WithRoom(100, room);
    EXPECT_EQ(t.Available(), room);
    for (uint32_t k = 1; k <= 66; ++k)  // 66 blocks: a 4 KB MTU packet with headers
      EXPECT_EQ(t.Fits(k), k <= room) << "room " << room << " packet " << k;
  }
}

TEST(TxCredits, FitsAcrossThe4095To0Wrap) {
  // FCTBS 4090, FCCL 4 (= 4100 mod 4096): 10 blocks of room straddling the wrap.
  TxCredits t;
  t.blocks_sent = 4090;
  t.fccl = 4;
  EXPECT_EQ(t.fctbs(), 4090);
  EXPECT_EQ(t.Available(), 10u);
  EXPECT_TRUE(t.Fits(5));
  EXPECT_TRUE(t.Fits(6));   // CR = 0 exactly
  EXPECT_TRUE(t.Fits(10));  // CR = 4 = FCCL
  EXPECT_FALSE(t.Fits(11));
  t.blocks_sent += 6;  // FCTBS wraps to 0
  EXPECT_EQ(t.fctbs(), 0);
  EXPECT_EQ(t.Available(), 4u);
  EXPECT_TRUE(t.Fits(4));
  EXPECT_FALSE(t.Fits(5));
}

TEST(TxCredits, WorksAfterBillionsOfBlocksSent) {
  // blocks_sent is 64-bit; only its low 12 bits are FCTBS.
  for (uint64_t sent : {uint64_t{5'000'000'000}, uint64_t{0xFFFFFFFFull} + 3,
                        uint64_t{0xFFFFFFFFFFFFF000ull}, uint64_t{0xFFFFFFFFFFFFFFF0ull}}) {
    TxCredits t = WithRoom(sent, 40);
    EXPECT_EQ(t.fctbs(), sent & 0xFFF);
    EXPECT_EQ(t.Available(), 40u) << sent;
    EXPECT_TRUE(t.Fits(40)) << sent;
    EXPECT_FALSE(t.Fits(41)) << sent;
  }
}

TEST(TxCredits, NoRoomWhenTheLimitEqualsBlocksSent) {
  TxCredits t = WithRoom(123456789, 0);
  EXPECT_EQ(t.Available(), 0u);
  EXPECT_FALSE(t.Fits(1));
  EXPECT_FALSE(t.Fits(66));
}

TEST(TxCredits, AvailableIsZeroWhenTheCounterGapIsBeyondTheWindow) {
  // (FCCL - FCTBS) mod 4096 > 2048 cannot be a credit grant; it means the sender is past the
  // limit (IBA 7.9.4.2 treats the upper half of the ring as negative).
  TxCredits t;
  t.blocks_sent = 10;
  t.fccl = 10 + 2049;  // no receiver advertises this: FCCL <= ABR + 2048 and ABR <= FCTBS
  EXPECT_EQ(t.Available(), 0u);
  t.fccl = 10 + 2048;
  EXPECT_EQ(t.Available(), 2048u);
  EXPECT_TRUE(t.Fits(2048));
  t.fccl = 5;  // 5 blocks over the limit
  EXPECT_EQ(t.Available(), 0u);
  EXPECT_FALSE(t.Fits(1));
}

TEST(RxCredits, FcclIsAbrPlusFreeSpace) {
  RxCredits r;
  r.capacity = 128;
  r.used = 28;
  r.abr = 1000;
  EXPECT_EQ(r.Fccl(), 1100);
}

TEST(RxCredits, FcclCapsFreeSpaceAt2048) {
  RxCredits r;
  r.capacity = 10000;
  r.used = 0;
  r.abr = 0;
  EXPECT_EQ(r.Fccl(), 2048);
  r.used = 7952;  // exactly 2048 free
  EXPECT_EQ(r.Fccl(), 2048);
  r.used = 7953;  // 2047 free
  EXPECT_EQ(r.Fccl(), 2047);
}

TEST(RxCredits, FcclWrapsModulo4096) {
  RxCredits r;
  r.capacity = 100;
  r.used = 0;
  r.abr = 4090;
  EXPECT_EQ(r.Fccl(), (4090 + 100) % 4096);
  r.abr = 7'000'000'000ull;
  EXPECT_EQ(r.Fccl(), (7'000'000'000ull + 100) % 4096);
}

TEST(RxCredits, OverfullBufferAdvertisesNoRoom) {
  RxCredits r;
  r.capacity = 64;
  r.used = 70;
  r.abr = 500;
  EXPECT_EQ(r.Fccl(), 500);
}

// A link with FC packets: the sender sends k-block packets while Fits(k); the receiver frees
// packets in FIFO order at random moments and now and then sends an FC packet carrying its FCCL.
// Checks, over enough traffic for the 12-bit counters to wrap thousands of times, that the
// receive buffer never overflows and that with a fresh FCCL the sender is blocked only when the
// buffer really lacks room for a packet.
void RunCreditLoop(uint32_t capacity, uint32_t k, uint64_t total_blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  TxCredits tx;
  RxCredits rx;
  rx.capacity = capacity;
  tx.fccl = rx.Fccl();  // the initial FC packet
  std::deque<uint32_t> held;
  uint64_t blocks_received = 0;
  uint64_t full_uses = 0;
  while (blocks_received < total_blocks) {
    // Sender: as many packets as the credits allow.
    while (tx.Fits(k)) {
      tx.blocks_sent += k;
      rx.abr += k;
      rx.used += k;
      held.push_back(k);
      blocks_received += k;
      ASSERT_LE(rx.used, capacity) << "overflow after " << blocks_received << " blocks";
    }
    // With an up-to-date FCCL, blocked means the advertised room, the free space capped at the
    // 2048-block window, is less than one packet.
    if (tx.fccl == rx.Fccl()) {
      uint32_t free = capacity - rx.used;
      ASSERT_LT(free < 2048 ? free : 2048, k) << "sender blocked with room in the buffer";
      if (free < k) ++full_uses;
    }
    // Receiver: forward some packets, then maybe send an FC packet.
    uint32_t frees = rng() % 4;
    for (uint32_t i = 0; i < frees && !held.empty(); ++i) {
      rx.used -= held.front();
      held.pop_front();
    }
    if (held.size() == 0 || rng() % 3 == 0) tx.fccl = rx.Fccl();
  }
  EXPECT_GT(full_uses, 0u);
  EXPECT_GT(tx.blocks_sent, uint64_t{4096} * 100);  // counters wrapped many times
  EXPECT_EQ(tx.blocks_sent & 0xFFF, rx.abr & 0xFFF);
}

TEST(CreditLoop, NeverOverflowsAndUsesTheWholeBufferSmallPackets) {
  RunCreditLoop(/*capacity=*/128, /*k=*/1, 2'000'000, 1);
}

TEST(CreditLoop, NeverOverflowsAndUsesTheWholeBufferUnevenPackets) {
  // 130 blocks of buffer, 33-block packets: at most 3 fit, and 31 blocks always stay unusable.
  RunCreditLoop(130, 33, 2'000'000, 2);
}

TEST(CreditLoop, NeverOverflowsAtTheFullWindowOf2048Blocks) {
  RunCreditLoop(2048, 66, 5'000'000, 3);
}

TEST(CreditLoop, NeverOverflowsWhenTheBufferExceedsThe2048BlockWindow) {
  RunCreditLoop(5000, 64, 5'000'000, 4);
}

TEST(CreditLoop, OneFcPacketGrantsAtMost2048BlocksOfALargerBuffer) {
  TxCredits tx;
  RxCredits rx;
  rx.capacity = 5000;
  tx.fccl = rx.Fccl();
  uint32_t sent = 0;
  while (tx.Fits(64)) {
    tx.blocks_sent += 64;
    sent += 64;
  }
  EXPECT_EQ(sent, 2048u);
}

TEST(CreditLoop, SenderFillsTheBufferExactlyWhenPacketsDivideIt) {
  TxCredits tx;
  RxCredits rx;
  rx.capacity = 256;
  tx.blocks_sent = 4096 * 1000 - 100;  // start just before a wrap
  rx.abr = tx.blocks_sent;
  tx.fccl = rx.Fccl();
  int sent = 0;
  while (tx.Fits(32)) {
    tx.blocks_sent += 32;
    rx.abr += 32;
    rx.used += 32;
    ++sent;
  }
  EXPECT_EQ(sent, 8);
  EXPECT_EQ(rx.used, 256u);
  EXPECT_EQ(tx.Available(), 0u);
  rx.used -= 32;
  tx.fccl = rx.Fccl();
  EXPECT_EQ(tx.Available(), 32u);
  EXPECT_TRUE(tx.Fits(32));
  EXPECT_FALSE(tx.Fits(33));
}

}  // namespace
}  // namespace ibemu::link
