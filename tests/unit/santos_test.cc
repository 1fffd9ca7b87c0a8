// Santos et al.'s mechanism on its hooks alone: the response functions' recovery times (the
// paper's S-B6 figures, notes B.1.5), the switch's cnt1/cnt2 and naive marking driven through a
// view whose buffer fill the test sets, and a source's window and IPD gate.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "common/wire/bth.h"
#include "emulator/cc/santos/input_marking.h"
#include "emulator/cc/santos/rate_functions.h"
#include "emulator/cc/santos/window_rate_source.h"
#include "emulator/hca/packet_builder.h"
#include "tests/unit/cc_fake_views.h"

namespace ibemu::cc::santos {
namespace {

constexpr double kRmin = 1.0 / 256;

struct Recovery {
  double packet_times = 0;
  int acks = 0;
};

// One ACK every 1/r packet times, none marked, from R_min until R_max.
Recovery FromRminToRmax(const RateFunction& f) {
  Recovery out;
  for (double r = kRmin; r < 1; r = f.Increase(r)) {
    out.packet_times += 1 / r;
    ++out.acks;
  }
  return out;
}

// Packet times to return to r after one marked ACK (T_rec(r)).
double RecoveryAfterOneMark(const RateFunction& f, double r) {
  double t = 0;
  for (double x = f.Decrease(r); x < r * (1 - 1e-12); x = f.Increase(x)) t += 1 / x;
  return t;
}

TEST(SantosRateFunctions, FimdRecoversInEightTrecAndLipdAndAimdIn255Trec) {
  // The paper's S-B6: 4.2 ms and 133.7 ms at 2.048 us per packet (1 GB/s, 2048-byte packets).
  Recovery fimd = FromRminToRmax(*MakeRateFunction("fimd", kRmin, 2));
  Recovery lipd = FromRminToRmax(*MakeRateFunction("lipd", kRmin, 2));
  Recovery aimd = FromRminToRmax(*MakeRateFunction("aimd", kRmin, 2));
  EXPECT_NEAR(fimd.packet_times * 2.048e-3, 4.2, 0.05);   // ms
  EXPECT_NEAR(lipd.packet_times * 2.048e-3, 133.7, 0.1);  // ms
  EXPECT_NEAR(aimd.packet_times * 2.048e-3, 133.7, 0.1);  // ms
  EXPECT_EQ(fimd.acks, 365);
  EXPECT_EQ(lipd.acks, 1417);
  EXPECT_EQ(aimd.acks, 32765);  // one increase per ACK makes the linear one slow
}

TEST(SantosRateFunctions, OneMarkCostsFimdAndLipdAboutTrecAtEveryRateButAimdGrowsWithTheRate) {
  for (const char* name : {"fimd", "lipd"}) {
    auto f = MakeRateFunction(name, kRmin, 2);
    for (double r : {2 * kRmin, 0.1, 0.5, 1.0}) {
      double t = RecoveryAfterOneMark(*f, r);
      EXPECT_GE(t, 256) << name << " at " << r;
      EXPECT_LE(t, 266) << name << " at " << r;
    }
  }
  auto aimd = MakeRateFunction("aimd", kRmin, 2);
  EXPECT_NEAR(RecoveryAfterOneMark(*aimd, 2 * kRmin), 256, 1);
  EXPECT_NEAR(RecoveryAfterOneMark(*aimd, 1.0), 32768, 2);  // condition 3 fails: 128 T_rec
}

TEST(SantosRateFunctions, RatesStayBetweenRminAndRmaxAndLipdAddsOnePacketTimeOfIpd) {
  for (const std::string& name : RateFunctionNames()) {
    auto f = MakeRateFunction(name, kRmin, 2);
    EXPECT_DOUBLE_EQ(f->Decrease(kRmin), kRmin) << name;
    EXPECT_DOUBLE_EQ(f->Increase(1.0), 1.0) << name;
  }
  auto lipd = MakeRateFunction("lipd", kRmin, 2);
  EXPECT_DOUBLE_EQ(1 / lipd->Decrease(1.0 / 8) - 1, 8);  // ipd 7 -> 8
  EXPECT_THROW(MakeRateFunction("tcp", kRmin, 2), std::invalid_argument);
}

// Input buffers of 132 blocks per VL: four packets.
using TestSwitch = testing::FakeSwitchView;

// 2048-byte RC SENDs (33 blocks), numbered.
engine::Packet Data(uint64_t id, uint32_t psn = 0) {
  engine::Packet p;
  hca::RcSegment s;
  s.slid = 5;
  s.dlid = 9;
  s.payload = 2048;
  s.psn = psn;
  hca::BuildRcSend(&p, s);
  p.id = id;
  return p;
}

struct Fabric {
  TestSwitch s;
  std::vector<engine::Packet> packets;
  // Queues the next packet at input `in` for `out`, counting its blocks in the input's fill;
  // `whole`: its tail has arrived (false: it is cutting through, its head just in).
  void Enqueue(InputMarking& m, int in, int out, bool whole = true) {
    packets.push_back(Data(packets.size() + 1));
    s.used[in] += 33;
    if (whole) s.arrived[{in, out}] += 33;
    m.OnEnqueue(s, in, 0, out, 0, packets.back());
    if (!whole) s.arrived[{in, out}] += 33;  // later
  }
  // Sends the oldest packet queued at `in` for `out`: whether it left with FECN.
  bool Send(InputMarking& m, int in, int out, uint64_t id) {
    engine::Packet& p = packets[id - 1];
    s.used[in] -= 33;
    s.arrived[{in, out}] -= 33;
    m.OnDequeue(s, in, 0, out, 0, p);
    m.OnTransmit(s, in, out, 0, &p);
    return p.bth().fecn();
  }
};

TEST(SantosMarking, AFullInputBufferMarksAsManyPacketsAsTheSwitchHoldsForItsOutputs) {
  Options o;
  o.trigger = Trigger::kProposed;
  InputMarking m(o);
  Fabric f;
  f.Enqueue(m, 2, 5);  // 1: input 2 -> output 5
  f.Enqueue(m, 2, 5);  // 2
  f.Enqueue(m, 3, 6);  // 3: input 3 -> output 6, not in the buffer that fills
  f.Enqueue(m, 1, 5);  // 4..7: input 1 fills with four packets, three for 5 and one for 7
  f.Enqueue(m, 1, 5);
  f.Enqueue(m, 1, 7);
  EXPECT_EQ(m.ToMark(5, 0), 0u);
  f.Enqueue(m, 1, 5);  // the fourth: full
  EXPECT_EQ(m.Waiting(5, 0), 5u);
  EXPECT_EQ(m.ToMark(5, 0), 5u);  // every packet the switch holds for 5, from any input
  EXPECT_EQ(m.ToMark(7, 0), 1u);
  EXPECT_EQ(m.ToMark(6, 0), 0u);  // no packet of the full buffer waits for 6
  // The first five packets to leave on 5 are marked, whichever input they come from.
  EXPECT_TRUE(f.Send(m, 2, 5, 1));
  EXPECT_TRUE(f.Send(m, 1, 5, 4));
  EXPECT_FALSE(f.Send(m, 3, 6, 3));
  f.Enqueue(m, 3, 5);  // 8: arrives after the trigger; the buffer at 1 is no longer full
  EXPECT_TRUE(f.Send(m, 2, 5, 2));
  EXPECT_TRUE(f.Send(m, 1, 5, 5));
  EXPECT_TRUE(f.Send(m, 3, 5, 8));
  EXPECT_EQ(m.ToMark(5, 0), 0u);
  EXPECT_FALSE(f.Send(m, 1, 5, 7));
  EXPECT_TRUE(f.Send(m, 1, 7, 6));
}

TEST(SantosMarking, EachArrivalThatFillsABufferTriggersAgainWithTheCountThen) {
  Options o;
  InputMarking m(o);
  Fabric f;
  for (int i = 0; i < 4; ++i) f.Enqueue(m, 1, 5);
  EXPECT_EQ(m.ToMark(5, 0), 4u);
  EXPECT_TRUE(f.Send(m, 1, 5, 1));
  f.Enqueue(m, 2, 5);  // 5: input 2 is not full; nothing new
  EXPECT_EQ(m.ToMark(5, 0), 3u);
  f.Enqueue(m, 1, 5);  // 6: input 1 full again: cnt2 = cnt1 (overwritten, not added)
  EXPECT_EQ(m.ToMark(5, 0), 5u);
}

TEST(SantosMarking, APacketCuttingThroughNamesNoOutputWhenItFillsTheBuffer) {
  InputMarking m(Options{});
  Fabric f;
  for (int i = 0; i < 3; ++i) f.Enqueue(m, 1, 5);
  f.Enqueue(m, 1, 7, false);  // fills the buffer, its tail still coming
  EXPECT_EQ(m.ToMark(5, 0), 3u);
  EXPECT_EQ(m.ToMark(7, 0), 0u);
}

TEST(SantosMarking, NaiveMarkingMarksOnlyThePacketsInTheFullBuffer) {
  Options o;
  o.trigger = Trigger::kNaive;
  InputMarking m(o);
  Fabric f;
  f.Enqueue(m, 2, 5);                              // 1: elsewhere
  for (int i = 0; i < 4; ++i) f.Enqueue(m, 1, 5);  // 2..5: full
  EXPECT_FALSE(f.Send(m, 2, 5, 1));
  EXPECT_TRUE(f.Send(m, 1, 5, 2));
  EXPECT_TRUE(f.Send(m, 1, 5, 3));
  f.Enqueue(m, 1, 5);  // 6: joins a buffer with room left
  EXPECT_TRUE(f.Send(m, 1, 5, 4));
  EXPECT_TRUE(f.Send(m, 1, 5, 5));
  EXPECT_FALSE(f.Send(m, 1, 5, 6));
}

// An HCA with one port and QPs whose gates the test reads. A packet takes 2074 ns on the link.
using TestHca = testing::FakeHcaView;

engine::Packet Ack(uint32_t psn, bool becn) {
  engine::Packet p;
  hca::BuildRcAck(&p, 9, 5, 0, 0, 0x100, psn, 1);
  p.bth().set_becn(becn);
  return p;
}

engine::Packet Sent(uint32_t psn) {
  engine::Packet p = Data(psn + 1, psn);
  p.bth().set_ack_req(true);
  return p;
}

TEST(SantosSource, AWindowOfOneWaitsForTheAckAndTheIpdSpacesPacketStarts) {
  Options o;
  o.window = 1;
  o.rate = "lipd";
  WindowRateSource src(o);
  TestHca h;
  EXPECT_TRUE(src.AckEachPacket());
  const SimTime t_pkt = 2074 * 1000;
  engine::Packet p0 = Sent(0);
  src.OnSent(h, 0, p0);
  EXPECT_EQ(h.gates[0], kGateClosed);
  EXPECT_EQ(src.Outstanding(0), 1u);
  // An unmarked ACK at R_max: the next packet may start when this one has left.
  h.now = 5 * t_pkt;
  engine::Packet a0 = Ack(0, false);
  src.OnResponse(h, 0, a0);
  EXPECT_EQ(src.Outstanding(0), 0u);
  EXPECT_EQ(h.gates[0], t_pkt);
  // A marked one halves the rate (ipd 0 -> 1): starts two packet times apart.
  h.now = 6 * t_pkt;
  engine::Packet p1 = Sent(1);
  src.OnSent(h, 0, p1);
  h.now = 7 * t_pkt;
  engine::Packet a1 = Ack(1, true);
  src.OnResponse(h, 0, a1);
  EXPECT_DOUBLE_EQ(src.Rate(0), 0.5);
  EXPECT_EQ(src.Throttle(h, 0), 1);
  EXPECT_EQ(h.gates[0], 6 * t_pkt + 2 * t_pkt);
  // An ACK for an older packet does not open the window of a newer one.
  engine::Packet p2 = Sent(2);
  src.OnSent(h, 0, p2);
  src.OnResponse(h, 0, a1);
  EXPECT_EQ(h.gates[0], kGateClosed);
}

TEST(SantosSource, TheDestinationEchoesFecnOnTheAckOnly) {
  WindowRateSource src(Options{});
  TestHca h;
  engine::Packet marked = Sent(3);
  marked.bth().set_fecn(true);
  EXPECT_EQ(src.OnReceive(h, 1, marked), Echo::kOnAck);
  engine::Packet plain = Sent(4);
  EXPECT_EQ(src.OnReceive(h, 1, plain), Echo::kNone);
  marked.bth().set_ack_req(false);
  EXPECT_EQ(src.OnReceive(h, 1, marked), Echo::kNone);  // no ACK to carry it, and no CNPs
}

}  // namespace
}  // namespace ibemu::cc::santos
