// MVCM on its hooks alone (notes C.4): the MVPM truth table of the paper's Fig. 3 driven through a
// switch view whose buffer fills the test sets, the echo of both bits, and the source's window
// and waiting-slot traces of Table 1 and Table 2.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "common/wire/bth.h"
#include "common/wire/extension_headers.h"
#include "common/wire/lrh.h"
#include "emulator/cc/mvcm/mvcm_source.h"
#include "emulator/cc/mvcm/mvpm_marking.h"
#include "emulator/hca/packet_builder.h"
#include "tests/unit/cc_fake_views.h"

namespace ibemu::cc::mvcm {
namespace {

// A CIOQ switch with 16-block input and output buffers (three 282-byte packets each), whose
// fills the test sets.
struct TestSwitch : testing::FakeSwitchView {
  TestSwitch() {
    capacity = 16;
    obuf_capacity = 16;
  }
};

// A 256-byte RC SEND: 282 bytes on the wire, 5 blocks.
engine::Packet Data(uint32_t psn = 0) {
  engine::Packet p;
  hca::RcSegment s;
  s.slid = 5;
  s.dlid = 9;
  s.payload = 256;
  s.psn = psn;
  s.ack_req = true;
  hca::BuildRcSend(&p, s);
  return p;
}

bool Mb(engine::Packet& p) {
  return p.bth().fecn();
}
bool Vb(engine::Packet& p) {
  return p.bth().resv6a() & kVbInResv6a;
}

// One switch hop: the packet enters input `in` (whose fill, counting it, is `in_blocks`) and
// leaves through `out` (whose buffer, counting it, holds `out_blocks`).
void Hop(MvpmMarking& m, TestSwitch& s, engine::Packet& p, uint32_t in_blocks,
         uint32_t out_blocks) {
  s.used[1] = in_blocks;
  s.output_held[2] = out_blocks;
  m.OnEnqueue(s, 1, 0, 2, 0, p);
  m.OnTransmit(s, 1, 2, 0, &p);
}

TEST(MvpmMarking, TheFlowsOfFigure3GetTheirBits) {
  MvpmMarking m{Options{}};
  TestSwitch s;
  // 0.66 x 16 = 10.56: the input is congested with three packets (15 blocks), not two (10);
  // 0.33 x 16 = 5.28: the output is saturated with two packets (10), not one (5).
  engine::Packet w = Data(), x = Data(), y = Data(), z = Data();
  Hop(m, s, w, 10, 5);   // w: no contention anywhere
  Hop(m, s, x, 5, 15);   // x: adds to the output, not backed up into its input
  Hop(m, s, y, 15, 15);  // y: the hot flow
  Hop(m, s, z, 15, 5);   // z: behind y in the input, its own output free
  EXPECT_FALSE(Mb(w));
  EXPECT_FALSE(Vb(w));
  EXPECT_FALSE(Mb(x));
  EXPECT_FALSE(Vb(x));  // never validated without the mark
  EXPECT_TRUE(Mb(y));
  EXPECT_TRUE(Vb(y));
  EXPECT_TRUE(Mb(z));
  EXPECT_FALSE(Vb(z));
}

TEST(MvpmMarking, BitsAreNeverClearedAndAcksAreNotMarked) {
  MvpmMarking m{Options{}};
  TestSwitch s;
  engine::Packet p = Data();
  Hop(m, s, p, 15, 15);
  Hop(m, s, p, 0, 0);  // a quiet switch further on
  EXPECT_TRUE(Mb(p));
  EXPECT_TRUE(Vb(p));
  engine::Packet warm = Data();
  Hop(m, s, warm, 15, 5);
  Hop(m, s, warm, 5, 15);  // validated at a later switch: a mark from earlier counts
  EXPECT_TRUE(Vb(warm));
  engine::Packet ack;
  hca::BuildRcAck(&ack, 9, 5, 0, 0, 0x100, 0, 1);
  Hop(m, s, ack, 15, 15);
  EXPECT_FALSE(Mb(ack));
  EXPECT_FALSE(Vb(ack));
}

TEST(MvpmMarking, WithoutOutputBuffersTheOutputQueueIsWhatTheInputsHoldForIt) {
  MvpmMarking m{Options{}};
  TestSwitch s;
  s.obuf_capacity = 0;
  engine::Packet p = Data(), q = Data();
  s.queued[2] = 5;  // one packet behind it, plus itself: 10 > 5.28
  Hop(m, s, p, 15, 0);
  s.queued[2] = 0;
  Hop(m, s, q, 15, 0);
  EXPECT_TRUE(Vb(p));
  EXPECT_FALSE(Vb(q));
}

using TestHca = testing::FakeHcaView;

TEST(MvcmEcho, TheAckCarriesBothBitsOfItsPacket) {
  MvcmSource src{Options{}};
  TestHca h;
  for (int bits = 0; bits < 4; ++bits) {
    engine::Packet d = Data();
    d.bth().set_fecn(bits & 1);
    if (bits & 2) d.bth().set_resv6a(kVbInResv6a);
    engine::Packet ack;
    hca::BuildRcAck(&ack, 9, 5, 0, 0, 0x100, 0, 1);
    src.OnAck(h, d, ack);
    EXPECT_EQ(ack.bth().becn(), (bits & 1) != 0) << bits;
    EXPECT_EQ((ack.bth().resv6a() & kVbInResv6a) != 0, (bits & 2) != 0) << bits;
  }
}

using A = MvcmSource::Ack;
constexpr SimTime kRtt = 342000;  // 342 ns, the 4-ary 4-fly's RTT_min

TEST(MvcmSource, HotAcksShrinkTheWindowThenMultiplyTheWaitingSlotsByK) {
  Options o;  // DW_max 2, k 4, n 3: the cap is k^(n-1) = 16
  MvcmSource src{o};
  std::vector<std::pair<int, uint64_t>> trace;
  for (int i = 0; i < 6; ++i) {
    src.Apply(0, A::kHot, 1000, kRtt);
    trace.push_back({src.Window(0), src.WaitingSlots(0)});
  }
  std::vector<std::pair<int, uint64_t>> want = {{1, 0}, {1, 1}, {1, 4}, {1, 16}, {1, 16}, {1, 16}};
  EXPECT_EQ(trace, want);
  EXPECT_EQ(src.WaitUntil(0), 1000 + 16 * kRtt);  // counted from the ACK
  // The first cold ACK removes the slots at once and leaves the window; the next gives it back.
  src.Apply(0, A::kCold, 2000, kRtt);
  EXPECT_EQ(src.WaitingSlots(0), 0u);
  EXPECT_EQ(src.WaitUntil(0), 0);
  EXPECT_EQ(src.Window(0), 1);
  src.Apply(0, A::kCold, 3000, kRtt);
  EXPECT_EQ(src.Window(0), 2);
  src.Apply(0, A::kCold, 4000, kRtt);
  EXPECT_EQ(src.Window(0), 2);  // never above DW_max
}

TEST(MvcmSource, WarmAcksTouchTheWindowOnly) {
  MvcmSource src{Options{}};
  src.Apply(0, A::kWarm, 0, kRtt);
  src.Apply(0, A::kWarm, 0, kRtt);
  EXPECT_EQ(src.Window(0), 1);
  EXPECT_EQ(src.WaitingSlots(0), 0u);
  src.Apply(0, A::kHot, 0, kRtt);
  src.Apply(0, A::kHot, 0, kRtt);
  src.Apply(0, A::kWarm, 5000, kRtt);  // at DW 1 with slots: neither changes
  EXPECT_EQ(src.Window(0), 1);
  EXPECT_EQ(src.WaitingSlots(0), 4u);
  EXPECT_EQ(src.WaitUntil(0), 5000 + 4 * kRtt);  // the slots still part the packets
}

TEST(MvcmSource, TheCapFollowsKAndNOrIsOff) {
  auto slots_after = [](WsCap cap, int hot) {
    Options o;
    o.k = 4;
    o.n = 3;
    o.cap = cap;
    MvcmSource src{o};
    for (int i = 0; i < hot; ++i) src.Apply(0, A::kHot, 0, kRtt);
    return src.WaitingSlots(0);
  };
  EXPECT_EQ(slots_after(WsCap::kKPowNMinus1, 10), 16u);
  EXPECT_EQ(slots_after(WsCap::kKPowN, 10), 64u);
  EXPECT_EQ(slots_after(WsCap::kNone, 8), 4096u);  // 1 + 7 increases: 4^6
}

TEST(MvcmSource, AblationsClassifyTheAcksDifferently) {
  Options full, no_warm, ipm;
  no_warm.warm = false;
  ipm.pure_ipm = true;
  EXPECT_EQ(MvcmSource(full).Classify(true, false), A::kWarm);
  EXPECT_EQ(MvcmSource(full).Classify(true, true), A::kHot);
  EXPECT_EQ(MvcmSource(full).Classify(false, false), A::kCold);
  EXPECT_EQ(MvcmSource(no_warm).Classify(true, false), A::kCold);
  EXPECT_EQ(MvcmSource(ipm).Classify(true, false), A::kHot);
}

engine::Packet AckFor(uint32_t psn, bool mb, bool vb) {
  engine::Packet p;
  hca::BuildRcAck(&p, 9, 5, 0, 0, 0x100, psn, 1);
  p.bth().set_becn(mb);
  if (vb) p.bth().set_resv6a(kVbInResv6a);
  return p;
}

TEST(MvcmSource, TheGateClosesOnAFullWindowAndWaitsTheIntervalAfterAHotAck) {
  MvcmSource src{Options{}};
  TestHca h;
  engine::Packet p0 = Data(0), p1 = Data(1), p2 = Data(2);
  src.OnSent(h, 0, p0);
  EXPECT_EQ(h.gates[0], 0);  // one of two slots used
  src.OnSent(h, 0, p1);
  EXPECT_EQ(h.gates[0], kGateClosed);
  h.now = 400000;
  engine::Packet a0 = AckFor(0, true, true);
  src.OnResponse(h, 0, a0);  // hot at DW 2: the window shrinks to the one still outstanding
  EXPECT_EQ(src.Window(0), 1);
  EXPECT_EQ(h.gates[0], kGateClosed);
  h.now = 800000;
  engine::Packet a1 = AckFor(1, true, true);
  src.OnResponse(h, 0, a1);  // hot at DW 1: one slot of the measured RTT (400 ns)
  EXPECT_EQ(src.WaitingSlots(0), 1u);
  EXPECT_EQ(h.gates[0], 800000 + 400000);
  // A message for an idle QP (nothing queued, nothing outstanding) starts it afresh.
  src.OnMessageQueued(h, 0, true);
  EXPECT_EQ(src.Window(0), 2);
  EXPECT_EQ(src.WaitingSlots(0), 0u);
  EXPECT_EQ(h.gates[0], 0);
  // Not while a packet is outstanding.
  src.OnSent(h, 0, p2);
  src.Apply(0, A::kHot, h.now, kRtt);
  src.OnMessageQueued(h, 0, true);
  EXPECT_EQ(src.Window(0), 1);
}

TEST(MvcmSource, ANakIsNoAckAndCarriesNoMarks) {
  MvcmSource src{Options{}};
  TestHca h;
  engine::Packet p0 = Data(0);
  src.OnSent(h, 0, p0);
  engine::Packet nak = AckFor(0, true, true);
  wire::Aeth{nak.hdr.data() + wire::kLrhBytes + wire::kBthBytes}.set_syndrome(0x60);  // NAK
  src.OnResponse(h, 0, nak);
  EXPECT_EQ(src.Window(0), 2);  // not taken as hot
  src.OnSent(h, 0, Data(1));
  EXPECT_EQ(h.gates[0], kGateClosed);  // the NAK freed no slot
}

}  // namespace
}  // namespace ibemu::cc::mvcm
