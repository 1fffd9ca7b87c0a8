// IB CC's two halves on their hooks alone: the switch's marking decision and the CA's CCTI,
// timer and gate, each driven through a view whose numbers the test sets.
#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "common/wire/bth.h"
#include "emulator/cc/ib/ca_throttling.h"
#include "emulator/cc/ib/switch_marking.h"
#include "emulator/cc/mechanism.h"
#include "emulator/hca/packet_builder.h"

namespace ibemu::cc::ib {
namespace {

class TestSwitch : public SwitchView {
 public:
  SimTime now = 0;
  uint32_t capacity = 256;                       // blocks per VL: 16 KiB
  std::map<std::pair<int, int>, uint32_t> from;  // (in, out) -> arrived blocks, VL 0
  uint32_t starved = 0;                          // bit per output
  mgmt::CcState cc;
  std::vector<std::pair<SimTime, uint64_t>> timers;

  TestSwitch() { cc.ports.resize(9); }
  SimTime Now() const override { return now; }
  int NumPorts() const override { return 8; }
  int DataVls() const override { return 1; }
  uint32_t VlCapacityBlocks() const override { return capacity; }
  uint32_t QueuedBlocks(int out, int vl) const override { return ArrivedBlocks(out, vl); }
  uint32_t QueuedBlocksFrom(int in, int out, int vl) const override {
    return ArrivedBlocksFrom(in, out, vl);
  }
  uint32_t ArrivedBlocks(int out, int vl) const override {
    uint32_t s = 0;
    for (auto& [k, v] : from)
      if (k.second == out) s += v;
    return s;
  }
  uint32_t ArrivedBlocksFrom(int in, int out, int vl) const override {
    auto it = from.find({in, out});
    return it == from.end() ? 0 : it->second;
  }
  int ContributingInputs(int out, int vl) const override {
    int n = 0;
    for (auto& [k, v] : from) n += k.second == out && v > 0;
    return n;
  }
  uint32_t InputUsedBlocks(int in, int vl) const override { return 0; }
  bool CreditStarved(int out, int vl) const override { return starved >> out & 1; }
  mgmt::CcState& Cca() override { return cc; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { timers.push_back({t, b}); }
  void SendControl(int port, uint32_t a, uint64_t b) override {}
  void Report(uint32_t a, uint64_t b) override {}
  uint32_t QueueBlocks(int in, int vl, int q) const override { return 0; }
  SimTime SerializationTime(int port, uint32_t bytes) const override { return bytes * 1000; }
  uint32_t QueuePackets(int in, int vl, int q) const override { return 0; }
};

// A 2048-byte RC SEND from LID 5 to LID 9: 33 blocks.
engine::Packet DataPacket() {
  engine::Packet p;
  hca::RcSegment s;
  s.slid = 5;
  s.dlid = 9;
  s.payload = 2048;
  hca::BuildRcSend(&p, s);
  return p;
}

// Sends one packet from input 1 to output `out` with `behind` blocks left at input 2, and says
// whether it left with FECN.
bool Sent(SwitchMarking& m, TestSwitch& s, int out, uint32_t behind) {
  engine::Packet p = DataPacket();
  s.from[{2, out}] = behind;
  m.OnEnqueue(s, 2, 0, out, 0, p);
  m.OnDequeue(s, 1, 0, out, 0, p);
  m.OnTransmit(s, 1, out, 0, &p);
  return p.bth().fecn();
}

TEST(IbSwitchMarking, ThresholdLevelsSpanTheBufferFromFifteenSixteenthsToOneSixteenth) {
  EXPECT_EQ(SwitchMarking::Level(0, 256), UINT32_MAX);  // 0 never marks
  EXPECT_EQ(SwitchMarking::Level(1, 256), 240u);
  EXPECT_EQ(SwitchMarking::Level(8, 256), 128u);
  EXPECT_EQ(SwitchMarking::Level(15, 256), 16u);
}

TEST(IbSwitchMarking, MarksOnlyAboveTheLevelAndNeverWithThresholdZero) {
  TestSwitch s;
  s.cc.sw.threshold = 8;  // level 128 blocks
  SwitchMarking m(Options{});
  EXPECT_FALSE(Sent(m, s, 3, 128));
  EXPECT_TRUE(Sent(m, s, 3, 129));
  s.cc.sw.threshold = 0;  // a Set acts on the next packet
  EXPECT_FALSE(Sent(m, s, 3, 255));
}

TEST(IbSwitchMarking, AVictimMarksOnlyIfItsPortIsInVictimMask) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.starved = 1u << 3;
  SwitchMarking m(Options{});
  EXPECT_FALSE(Sent(m, s, 3, 200));
  s.cc.sw.victim_mask[31] = 1u << 3;  // port 3
  EXPECT_TRUE(Sent(m, s, 3, 200));
}

TEST(IbSwitchMarking, PacketsSmallerThanPacketSizeAreNotMarked) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.cc.sw.packet_size = 34;  // credits: the 33-block packet is smaller
  SwitchMarking m(Options{});
  EXPECT_FALSE(Sent(m, s, 3, 200));
  s.cc.sw.packet_size = 33;
  EXPECT_TRUE(Sent(m, s, 3, 200));
}

TEST(IbSwitchMarking, CounterMarkingRateLeavesThatManyEligiblePacketsBetweenMarks) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.cc.sw.marking_rate = 3;
  Options o;
  o.marking = Marking::kCounter;
  SwitchMarking m(o);
  std::string marks;
  for (int i = 0; i < 12; ++i) marks += Sent(m, s, 3, 200) ? 'M' : '.';
  EXPECT_EQ(marks, "...M...M...M");
}

TEST(IbSwitchMarking, RandomMarkingRateMarksOneInRatePlusOneOnAverage) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.cc.sw.marking_rate = 4;
  SwitchMarking m(Options{});
  int marks = 0;
  for (int i = 0; i < 10000; ++i) marks += Sent(m, s, 3, 200);
  EXPECT_NEAR(marks, 2000, 150);  // p = 1/5, 4 sigma = 160
}

TEST(IbSwitchMarking, APortSettingOverridesTheSwitchForItsPortOnly) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.cc.ports[4] = {true, 0, 0, 0, 0};  // port 4: Threshold 0
  SwitchMarking m(Options{});
  EXPECT_TRUE(Sent(m, s, 3, 200));
  EXPECT_FALSE(Sent(m, s, 4, 200));
}

// Credit starvation, as docs/cc/ib.md reads it: a port in Credit_Mask above CS_Threshold returns
// the credits of what leaves for it CS_ReturnDelay late (shift:multiplier on the packet's own
// time on the input link); a port's Control_Type 1 element gives its own CS_Threshold and
// CS_ReturnDelay and stops its FECN marking.
TEST(IbSwitchMarking, CreditStarvationHoldsCreditsBackAboveCsThreshold) {
  TestSwitch s;
  SwitchMarking m(Options{});
  engine::Packet p = DataPacket();
  const SimTime own = s.SerializationTime(1, p.wire_bytes());
  auto delay = [&](int out, uint32_t behind) {
    s.from[{2, out}] = behind;
    m.OnEnqueue(s, 2, 0, out, 0, p);
    return m.CreditReturnDelay(s, 1, 0, out, 0, p);
  };
  s.cc.sw.credit_mask[31] = 1u << 3;  // port 3
  s.cc.sw.cs_threshold = 15;          // above 16 of 256 blocks
  s.cc.sw.cs_return_delay = 2;        // shift 0, multiplier 2
  EXPECT_EQ(delay(3, 200), 2 * own);
  EXPECT_EQ(delay(3, 10), 0) << "below CS_Threshold";
  EXPECT_EQ(delay(5, 200), 0) << "port 5 is not in Credit_Mask";
  s.cc.sw.cs_return_delay = 0;
  EXPECT_EQ(delay(3, 200), 0) << "CS_ReturnDelay 0 holds nothing back";
  // Port 4's own element: CS_Threshold 8 (level 128), CS_ReturnDelay 1:3, and no marking there
  // although the switch marks above Threshold 15.
  s.cc.sw.threshold = 15;
  s.cc.ports[4] = {true, 1, 8, 0, 1u << 14 | 3};
  EXPECT_EQ(delay(4, 200), (own >> 1) * 3);
  EXPECT_EQ(delay(4, 100), 0);
  EXPECT_FALSE(Sent(m, s, 4, 200)) << "a Control_Type 1 port does not mark";
  EXPECT_TRUE(Sent(m, s, 3, 200));
}

TEST(IbSwitchMarking, HysteresisKeepsThePortCongestedDownToTheLowerLevel) {
  TestSwitch s;
  s.cc.sw.threshold = 8;  // level 128
  Options o;
  o.hysteresis_blocks = 64;  // lower level 64
  SwitchMarking m(o);
  EXPECT_FALSE(Sent(m, s, 3, 100));  // below the level: not entered
  EXPECT_TRUE(Sent(m, s, 3, 130));   // entered
  EXPECT_TRUE(Sent(m, s, 3, 100));   // still above the lower level
  EXPECT_TRUE(Sent(m, s, 3, 65));
  EXPECT_FALSE(Sent(m, s, 3, 64));  // left
  EXPECT_FALSE(Sent(m, s, 3, 100));
}

TEST(IbSwitchMarking, VoqModeLooksAtEachInputAndSumPerInputAtTheAverage) {
  TestSwitch s;
  s.cc.sw.threshold = 8;  // level 128
  // Inputs 2 and 5 each hold 100 blocks for output 3: 200 in all.
  auto sent = [&](Evaluation ev) {
    Options o;
    o.evaluation = ev;
    SwitchMarking m(o);
    s.from[{5, 3}] = 100;
    engine::Packet p = DataPacket();
    s.from[{2, 3}] = 100;
    m.OnEnqueue(s, 5, 0, 3, 0, p);
    m.OnEnqueue(s, 2, 0, 3, 0, p);
    m.OnTransmit(s, 1, 3, 0, &p);
    return p.bth().fecn();
  };
  EXPECT_TRUE(sent(Evaluation::kSum));           // 200 > 128
  EXPECT_FALSE(sent(Evaluation::kVoq));          // neither 100 is
  EXPECT_FALSE(sent(Evaluation::kSumPerInput));  // 200 / 2
}

TEST(IbSwitchMarking, EachMarkIsLoggedWithTheSwitchPortInPortMap) {
  TestSwitch s;
  s.cc.sw.threshold = 15;
  s.now = 5 * mgmt::kPsPerCcTick;
  SwitchMarking m(Options{});
  ASSERT_TRUE(Sent(m, s, 3, 200));
  EXPECT_EQ(s.cc.log.counter, 1);
  EXPECT_EQ(s.cc.log.map[31], 1u << 3);
  ASSERT_EQ(s.cc.log.count, 1);
  EXPECT_EQ(s.cc.log.events[0].slid, 5);
  EXPECT_EQ(s.cc.log.events[0].dlid, 9);
  EXPECT_EQ(s.cc.log.events[0].timestamp, 5u);
}

class TestHca : public HcaView {
 public:
  SimTime now = 0;
  std::vector<mgmt::CcState> cc = std::vector<mgmt::CcState>(2);
  struct Qp {
    int port, sl;
    SimTime gate = 0;
  };
  std::vector<Qp> qps = {{1, 0}, {1, 0}, {1, 1}};
  std::array<SimTime, 16> sl_gate{};
  std::vector<std::pair<SimTime, std::pair<uint32_t, uint64_t>>> timers;

  SimTime Now() const override { return now; }
  int NumPorts() const override { return 1; }
  mgmt::CcState& Cca(int port) override { return cc[port]; }
  uint32_t NumQps() const override { return static_cast<uint32_t>(qps.size()); }
  int QpPort(uint32_t qp) const override { return qps[qp].port; }
  int QpSl(uint32_t qp) const override { return qps[qp].sl; }
  uint32_t QpNumber(uint32_t qp) const override { return 0x100 + qp; }
  uint16_t QpRemoteLid(uint32_t qp) const override { return 9; }
  SimTime SerializationTime(int port, uint32_t bytes) const override { return bytes * 500; }
  uint32_t Mtu() const override { return 2048; }
  void SetQpGate(uint32_t qp, SimTime t) override { qps[qp].gate = t; }
  void SetSlGate(int port, int sl, SimTime t) override { sl_gate[sl] = t; }
  SimTime QpGate(uint32_t qp) const override { return qps[qp].gate; }
  SimTime SlGate(int port, int sl) const override { return sl_gate[sl]; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { timers.push_back({t, {a, b}}); }
  void SendControl(int port, uint32_t a, uint64_t b) override {}
  void Report(uint32_t a, uint64_t b) override {}
  int NumEndNodes() const override { return 64; }
  uint16_t Lid(int port) const override { return 1; }
  int Sl2Vl(int port, int sl) const override { return sl; }
  int DataVls(int port) const override { return 8; }
  void SendMad(int port, uint16_t dlid, int sl, int vl, const uint8_t* mad) override {}
  // Runs every timer due by `t`, in order, as the event queue would.
  void RunTimersUntil(CaThrottling& c, SimTime t) {
    while (true) {
      size_t best = timers.size();
      for (size_t i = 0; i < timers.size(); ++i)
        if (timers[i].first <= t && (best == timers.size() || timers[i].first < timers[best].first))
          best = i;
      if (best == timers.size()) return;
      auto [when, ab] = timers[best];
      timers.erase(timers.begin() + static_cast<long>(best));
      now = when;
      c.OnTimer(*this, ab.first, ab.second);
    }
  }
};

engine::Packet Becn() {
  engine::Packet p;
  hca::BuildCnp(&p, 9, 5, 0, 0, 0x100);
  return p;
}

// SL 0 valid, CCTI_Increase 2, CCTI_Timer 10 ticks, CCTI_Min 1; CCT[i] = i * 1 ns over 8 entries.
void Configure(TestHca& h) {
  mgmt::CcState& cc = h.cc[1];
  cc.ca.control_map = 1;
  cc.ca.sl[0] = {10, 2, 0, 1};
  cc.ccti_limit = 7;
  for (int i = 0; i < 8; ++i) cc.cct[i] = static_cast<uint16_t>(i);
}

Options Base1ns() {
  Options o;
  o.cct_base = 1000;
  return o;
}

TEST(IbCaThrottling, FecnIsAnsweredOnTheAckWhenOneIsAskedForAndByCnpOtherwise) {
  TestHca h;
  CaThrottling c(Options{});
  engine::Packet p = DataPacket();  // SEND Only: AckReq set
  EXPECT_EQ(c.OnReceive(h, 1, p), Echo::kNone);
  p.bth().set_fecn(true);
  EXPECT_EQ(c.OnReceive(h, 1, p), Echo::kOnAck);
  p.bth().set_ack_req(false);
  EXPECT_EQ(c.OnReceive(h, 1, p), Echo::kCnp);
  Options o;
  o.becn_on_ack = false;
  CaThrottling always_cnp(o);
  p.bth().set_ack_req(true);
  EXPECT_EQ(always_cnp.OnReceive(h, 1, p), Echo::kCnp);
}

TEST(IbCaThrottling, BecnRaisesTheQpsCctiUpToTheLimitAndTheGateFollowsTheTable) {
  TestHca h;
  Configure(h);
  CaThrottling c(Base1ns());
  engine::Packet data = DataPacket(), becn = Becn();
  c.OnSent(h, 0, data);
  EXPECT_EQ(h.qps[0].gate, 0);  // CCTI 0, CCT[0] = 0: no delay, no gate
  c.OnResponse(h, 0, becn);     // CCTI 2
  c.OnSent(h, 0, data);
  SimTime wire = h.SerializationTime(1, data.wire_bytes());
  EXPECT_EQ(h.qps[0].gate, wire + 2000);                 // the packet, then CCT[2] = 2 ns
  for (int i = 0; i < 5; ++i) c.OnResponse(h, 0, becn);  // 12, held at CCTI_Limit 7
  c.OnSent(h, 0, data);
  EXPECT_EQ(h.qps[0].gate, wire + 7000);
  // QP 1 shares the SL but not the CCTI (QP-based: throttling one QP never blocks another).
  c.OnSent(h, 1, data);
  EXPECT_EQ(h.qps[1].gate, 0);
  // A BECN on SL 1, whose entry Control_Map leaves invalid, changes nothing.
  c.OnResponse(h, 2, becn);
  c.OnSent(h, 2, data);
  EXPECT_EQ(h.qps[2].gate, 0);
}

TEST(IbCaThrottling, TheTimerLowersEveryCctiOfTheSlByOneDownToCctiMin) {
  TestHca h;
  Configure(h);
  CaThrottling c(Base1ns());
  engine::Packet data = DataPacket(), becn = Becn();
  c.OnResponse(h, 0, becn);
  c.OnResponse(h, 0, becn);        // QP 0: 4
  c.OnResponse(h, 1, becn);        // QP 1: 2
  ASSERT_EQ(h.timers.size(), 1u);  // one timer for (port 1, SL 0), started by the first BECN
  EXPECT_EQ(h.timers[0].first, 10 * mgmt::kPsPerCcTick);
  auto ccti = [&](uint32_t qp) {
    c.OnSent(h, qp, data);
    return (h.qps[qp].gate - h.now - h.SerializationTime(1, data.wire_bytes())) / 1000;
  };
  h.RunTimersUntil(c, 10 * mgmt::kPsPerCcTick);
  EXPECT_EQ(ccti(0), 3);
  EXPECT_EQ(ccti(1), 1);
  h.RunTimersUntil(c, 100 * mgmt::kPsPerCcTick);
  EXPECT_EQ(ccti(0), 1);  // CCTI_Min
  EXPECT_EQ(ccti(1), 1);
  EXPECT_TRUE(h.timers.empty());  // nothing above CCTI_Min: the timer stopped
}

TEST(IbCaThrottling, SlBasedPortsThrottleTheWholeSlThroughItsGate) {
  TestHca h;
  Configure(h);
  h.cc[1].ca.port_control = 1;
  CaThrottling c(Base1ns());
  engine::Packet data = DataPacket(), becn = Becn();
  c.OnResponse(h, 1, becn);  // SL 0: 2
  c.OnSent(h, 0, data);      // QP 0 sends: SL 0 gated for both QPs
  EXPECT_EQ(h.sl_gate[0], h.SerializationTime(1, data.wire_bytes()) + 2000);
  EXPECT_EQ(h.qps[0].gate, 0);
}

TEST(IbCaThrottling, ReachingTriggerThresholdLogsOneEvent) {
  TestHca h;
  Configure(h);
  h.cc[1].ca.sl[0].trigger_threshold = 4;
  CaThrottling c(Base1ns());
  engine::Packet becn = Becn();
  becn.lrh().set_dlid(5);
  c.OnResponse(h, 0, becn);  // 2
  EXPECT_EQ(h.cc[1].log.counter, 0);
  c.OnResponse(h, 0, becn);  // 4: reached
  c.OnResponse(h, 0, becn);  // 6: already above
  EXPECT_EQ(h.cc[1].log.counter, 1);
  ASSERT_EQ(h.cc[1].log.count, 1);
  EXPECT_EQ(h.cc[1].log.events[0].local_qp, 0x100u);
  EXPECT_EQ(h.cc[1].log.events[0].remote_lid, 9);
  EXPECT_EQ(h.cc[1].log.map[31], 1);  // SL 0
}

TEST(CcMechanisms, ParametersAreCheckedWhenTheMechanismIsMade) {
  RegisterMechanisms();
  policy::Params p;
  p.Set("evaluation", "per_voq", 7);
  try {
    MechanismRegistry::Get().Make("ib", p);
    FAIL() << "accepted a bad evaluation";
  } catch (const policy::ParamError& e) {
    EXPECT_EQ(e.key(), "evaluation");
    EXPECT_EQ(e.line(), 7);
    EXPECT_NE(std::string(e.what()).find("not one of sum, sum_per_input, voq"), std::string::npos)
        << e.what();
  }
  policy::Params q;
  q.Set("hysteresis", "33", 3);
  EXPECT_THROW(MechanismRegistry::Get().Make("ib", q), policy::ParamError);
  policy::Params none;
  none.Set("evaluation", "sum", 1);
  EXPECT_THROW(MechanismRegistry::Get().Make("none", none), policy::ParamError);
}

}  // namespace
}  // namespace ibemu::cc::ib
