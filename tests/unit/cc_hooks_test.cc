// Each congestion-control hook of a real switch and a real HCA, driven alone through the device
// harness: what the hook is called with, when, and what the device does with its answer.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/wire/bth.h"
#include "common/wire/opcode.h"
#include "emulator/cc/mechanism.h"
#include "emulator/hca/hca.h"
#include "emulator/hca/packet_builder.h"
#include "emulator/policy/builtin.h"
#include "emulator/switch/switch.h"
#include "tests/harness/device_harness.h"

namespace ibemu::testing {
namespace {

using link::kPsPerNs;
using link::kPsPerUs;

// Records what the switch tells it, and answers as each test sets it up.
class RecordingCc : public cc::SwitchCc {
 public:
  struct Call {
    std::string what;
    link::SimTime t = 0;
    int in = 0, out = 0, vl = 0;
    uint32_t queued = 0, arrived = 0, queue_packets = 0;
    bool starved = false;
  };
  int extra_queues = 0;
  std::function<int(const engine::Packet&, int)> queue;  // (packet, chosen) -> queue
  bool mark = false, send_control = false, timer = false, pick_last = false;
  link::SimTime hold_credits = 0;  // CreditReturnDelay's answer
  std::vector<Call> calls;

  int NumQueues(int base) const override { return base + extra_queues; }
  int Queue(cc::SwitchView& s, int in, int in_vl, int out, int out_vl, const engine::Packet& p,
            int chosen) override {
    return queue ? queue(p, chosen) : chosen;
  }
  void OnEnqueue(cc::SwitchView& s, int in, int in_vl, int out, int out_vl,
                 engine::Packet& p) override {
    calls.push_back({"enqueue", s.Now(), in, out, out_vl, s.QueuedBlocks(out, out_vl),
                     s.ArrivedBlocks(out, out_vl), s.QueuePackets(in, in_vl, p.queue), false});
    if (send_control) s.SendControl(in, 7, 99);
    if (timer) s.PostTimer(s.Now() + kPsPerUs, 3, 4);
  }
  void OnDequeue(cc::SwitchView& s, int in, int in_vl, int out, int out_vl,
                 const engine::Packet& p) override {
    calls.push_back({"dequeue", s.Now(), in, out, out_vl, s.QueuedBlocks(out, out_vl),
                     s.ArrivedBlocks(out, out_vl), 0, false});
  }
  void OnTransmit(cc::SwitchView& s, int in, int out, int vl, engine::Packet* p) override {
    calls.push_back({"transmit", s.Now(), in, out, vl, s.QueuedBlocks(out, vl),
                     s.ArrivedBlocks(out, vl), 0, s.CreditStarved(out, vl)});
    if (mark) p->bth().set_fecn(true);
  }
  void OnTimer(cc::SwitchView& s, uint32_t a, uint64_t b) override {
    calls.push_back({"timer " + std::to_string(a) + " " + std::to_string(b), s.Now()});
  }
  link::SimTime CreditReturnDelay(cc::SwitchView& s, int in, int in_vl, int out, int out_vl,
                                  const engine::Packet& p) override {
    calls.push_back({"credit return", s.Now(), in, out, out_vl, s.QueuedBlocks(out, out_vl)});
    return hold_credits;
  }
  void OnControl(cc::SwitchView& s, int port, uint32_t a, uint64_t b) override {
    calls.push_back({"control " + std::to_string(a) + " " + std::to_string(b), s.Now(), port});
  }
  bool ArbitratesQueues() const override { return pick_last; }
  int PickQueue(const cc::SwitchView& s, int in, int out, int vl, const int* queues,
                int n) const override {
    return n - 1;
  }

  std::vector<Call> Of(const std::string& what) const {
    std::vector<Call> v;
    for (const Call& c : calls)
      if (c.what == what) v.push_back(c);
    return v;
  }
};

// A 4-port switch, 4x QDR links of 10 ns, 128 blocks per VL, VOQsw; DLIDs 10 and 12 leave on
// port 3, DLID 11 on port 4.
class SwitchHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    policy::RegisterBuiltins();
    queuing_ = policy::InputQueuingRegistry::Get().Make("queuing.voqsw");
    ctx_.queuing = queuing_.get();
    ctx_.dest_index_of_lid.assign(16, -1);
    for (int lid = 10; lid <= 12; ++lid) ctx_.dest_index_of_lid[lid] = lid - 10;
    ctx_.num_destinations = 3;
    sw::SwitchConfig cfg;
    cfg.latency = 100 * kPsPerNs;
    sw_ = std::make_unique<sw::Switch>(DeviceHarness::kDevice, "S", 4, cfg, &ctx_);
    sw_->lft().assign(16, sw::Switch::kNoRoute);
    sw_->lft()[10] = 3;
    sw_->lft()[12] = 3;
    sw_->lft()[11] = 4;
    auto cc = std::make_unique<RecordingCc>();
    rec_ = cc.get();
    configure_(*rec_);
    sw_->SetCc(std::move(cc));
    h_.Attach(sw_.get(), link::LinkRate(), 10 * kPsPerNs, 1, 128);
    h_.Start();
  }
  // A 2048-byte RC SEND (33 blocks) from LID 5.
  engine::Packet* Packet(uint16_t dlid) {
    engine::Packet* p = h_.NewPacket();
    hca::RcSegment s;
    s.slid = 5;
    s.dlid = dlid;
    s.payload = 2048;
    hca::BuildRcSend(p, s);
    return p;
  }
  link::SimTime Ser() const { return link::LinkRate().SerializationTime(2048 + 26 + 8); }

  std::function<void(RecordingCc&)> configure_ = [](RecordingCc&) {};
  std::unique_ptr<policy::InputQueuing> queuing_;
  link::FabricContext ctx_;
  std::unique_ptr<sw::Switch> sw_;
  RecordingCc* rec_ = nullptr;
  DeviceHarness h_;
};

TEST_F(SwitchHooks, EnqueueSeesQueuedAndArrivedBlocksAndTransmitSeesTheCreditStall) {
  rec_->mark = true;
  // Two packets back to back on port 1 for port 3, which has no credits yet.
  h_.Arrive(1, Packet(10), 100 * kPsPerNs);
  h_.Arrive(1, Packet(10), 100 * kPsPerNs + Ser());
  h_.RunUntil(2 * kPsPerUs);
  auto enq = rec_->Of("enqueue");
  ASSERT_EQ(enq.size(), 2u);
  EXPECT_EQ(enq[0].t, 100 * kPsPerNs);
  EXPECT_EQ(enq[0].in, 1);
  EXPECT_EQ(enq[0].out, 3);
  EXPECT_EQ(enq[0].queued, 33u);
  EXPECT_EQ(enq[0].arrived, 0u);  // its tail is still coming
  EXPECT_EQ(enq[1].queued, 66u);
  EXPECT_EQ(enq[1].arrived, 33u);  // the first is all in
  EXPECT_TRUE(rec_->Of("transmit").empty());
  EXPECT_TRUE(h_.PacketsOn(3).empty());

  h_.Credits(3, 0, 128, 3 * kPsPerUs);
  h_.RunUntil(5 * kPsPerUs);
  auto tx = rec_->Of("transmit");
  ASSERT_EQ(tx.size(), 2u);
  EXPECT_EQ(tx[0].t, 3 * kPsPerUs);
  EXPECT_TRUE(tx[0].starved);    // it waited for the credits
  EXPECT_EQ(tx[0].queued, 33u);  // what it leaves behind
  EXPECT_EQ(tx[0].arrived, 33u);
  EXPECT_EQ(tx[1].queued, 0u);
  // The dequeue comes first and already excludes the packet.
  auto deq = rec_->Of("dequeue");
  ASSERT_EQ(deq.size(), 2u);
  EXPECT_EQ(deq[0].queued, 33u);
  // The mark the hook set is on the wire.
  auto out = h_.PacketsOn(3);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].Header().bth().fecn());
}

// H2's credit return: a packet's input blocks are freed, and its credits sent upstream in an FC
// packet, as long after the crossbar read it as the mechanism says (IB CC's credit starvation).
TEST_F(SwitchHooks, CreditReturnDelayHoldsTheUpstreamCreditsBack) {
  auto fc_on = [&](int port) {
    std::vector<link::SimTime> t;
    for (const auto& s : h_.sent)
      if (s.e.kind == engine::kFlowControlArrive && s.e.port == port) t.push_back(s.e.time);
    return t;
  };
  h_.Credits(3, 0, 128, 0);
  h_.RunUntil(kPsPerUs);
  size_t before = fc_on(1).size();
  h_.Arrive(1, Packet(10), kPsPerUs);
  h_.RunUntil(3 * kPsPerUs);
  std::vector<link::SimTime> at_once = fc_on(1);
  ASSERT_EQ(at_once.size(), before + 1) << "the read packet's credits went back in one FC packet";
  ASSERT_EQ(rec_->Of("credit return").size(), 1u);
  EXPECT_EQ(rec_->Of("credit return")[0].out, 3);

  rec_->hold_credits = 5 * kPsPerUs;
  h_.Arrive(1, Packet(10), 4 * kPsPerUs);
  h_.RunUntil(6 * kPsPerUs);
  EXPECT_EQ(fc_on(1).size(), at_once.size()) << "credits returned before the delay";
  h_.RunUntil(12 * kPsPerUs);
  std::vector<link::SimTime> held = fc_on(1);
  ASSERT_EQ(held.size(), at_once.size() + 1);
  // Both packets were read the same time after their arrival: the FC packet trails by the delay.
  EXPECT_EQ(held.back() - 4 * kPsPerUs, at_once.back() - kPsPerUs + 5 * kPsPerUs);
}

TEST_F(SwitchHooks, AnIdlePortCutsThroughWithoutACreditStall) {
  h_.Credits(3, 0, 128, 0);
  h_.Arrive(1, Packet(10), 100 * kPsPerNs);
  h_.RunUntil(2 * kPsPerUs);
  auto tx = rec_->Of("transmit");
  ASSERT_EQ(tx.size(), 1u);
  EXPECT_FALSE(tx[0].starved);
  EXPECT_EQ(tx[0].arrived, 0u);
  EXPECT_FALSE(h_.PacketsOn(3).at(0).Header().bth().fecn());
}

class SwitchQueueHooks : public SwitchHooks {
 protected:
  void SetUp() override {
    // Two queues of the mechanism's after VOQsw's five (one per port 0..4); DLID 10 goes to the
    // last, so it and DLID 12 wait at input 1 for port 3 in different queues.
    configure_ = [this](RecordingCc& r) {
      r.extra_queues = 2;
      r.queue = [](const engine::Packet& p, int chosen) {
        return const_cast<engine::Packet&>(p).lrh().dlid() == 10 ? 6 : chosen;
      };
      r.send_control = true;
      r.timer = true;
      r.pick_last = pick_last_;
    };
    SwitchHooks::SetUp();
  }
  // DLID 12 then DLID 10 queue at input 1 for port 3, in different queues, until port 3 gets
  // credits at 3 us: the DLIDs in the order they left.
  std::vector<int> OrderOut() {
    h_.Arrive(1, Packet(12), 100 * kPsPerNs);
    h_.Arrive(1, Packet(10), 100 * kPsPerNs + Ser());
    h_.Credits(3, 0, 128, 3 * kPsPerUs);
    h_.RunUntil(5 * kPsPerUs);
    std::vector<int> v;
    for (const auto& s : h_.PacketsOn(3)) v.push_back(s.Header().lrh().dlid());
    return v;
  }
  bool pick_last_ = false;
};

TEST_F(SwitchQueueHooks, QueuesControlMessagesAndTimersOfTheMechanism) {
  h_.Arrive(1, Packet(10), 100 * kPsPerNs);
  h_.Control(2, 5, 6, 300 * kPsPerNs);
  h_.RunUntil(2 * kPsPerUs);
  auto enq = rec_->Of("enqueue");
  ASSERT_EQ(enq.size(), 1u);
  EXPECT_EQ(enq[0].queue_packets, 1u);  // in queue 6, the mechanism's
  // The control message went back out of port 1, arriving one cable latency later.
  bool seen = false;
  for (const auto& s : h_.sent)
    if (s.e.kind == engine::kControlArrive) {
      seen = true;
      EXPECT_EQ(s.e.port, 1);
      EXPECT_EQ(s.e.time, 110 * kPsPerNs);
      EXPECT_EQ(s.e.a, 7u);
      EXPECT_EQ(s.e.b, 99u);
    }
  EXPECT_TRUE(seen);
  auto ctl = rec_->Of("control 5 6");
  ASSERT_EQ(ctl.size(), 1u);
  EXPECT_EQ(ctl[0].in, 2);  // the port it came in on
  EXPECT_EQ(ctl[0].t, 300 * kPsPerNs);
  auto tm = rec_->Of("timer 3 4");
  ASSERT_EQ(tm.size(), 1u);
  EXPECT_EQ(tm[0].t, 1100 * kPsPerNs);
}

TEST_F(SwitchQueueHooks, WithoutQueueArbitrationTheOldestRequestGoesFirst) {
  EXPECT_EQ(OrderOut(), (std::vector<int>{12, 10}));
}

class SwitchQueueArbitration : public SwitchQueueHooks {
 protected:
  void SetUp() override {
    pick_last_ = true;
    SwitchQueueHooks::SetUp();
  }
};

TEST_F(SwitchQueueArbitration, TheMechanismPicksAmongAnInputsQueues) {
  EXPECT_EQ(OrderOut(), (std::vector<int>{10, 12}));  // the later request, from queue 6, first
}

// An HCA with LID 20 and IB CC, receiving marked packets from LID 5.
class HcaHooks : public ::testing::Test {
 protected:
  void SetUp() override {
    policy::RegisterBuiltins();
    cc::RegisterMechanisms();
    queuing_ = policy::InputQueuingRegistry::Get().Make("queuing.voqsw");
    ctx_.queuing = queuing_.get();
    ctx_.dest_index_of_lid.assign(32, -1);
    ctx_.dest_index_of_lid[5] = 0;
    ctx_.dest_index_of_lid[20] = 1;
    ctx_.num_destinations = 2;
    flows_.Init({}, kPsPerUs, 1);
    hca_ = std::make_unique<hca::Hca>(DeviceHarness::kDevice, "H", 1, hca::HcaConfig{}, &ctx_,
                                      &flows_, 1);
    hca_->set_lid(1, 20);
    hca_->SetCc(cc::MechanismRegistry::Get().Make("ib", {})->ForHca(1));
    h_.Attach(hca_.get(), link::LinkRate(), 10 * kPsPerNs, 1, 128);
    h_.Start();
    h_.Credits(1, 0, 128, 0);
  }
  engine::Packet* Marked(bool last) {
    engine::Packet* p = h_.NewPacket();
    hca::RcSegment s;
    s.slid = 5;
    s.dlid = 20;
    s.dest_qp = 0x123;
    s.payload = 2048;
    s.first = true;
    s.last = last;  // AckReq on the last segment
    hca::BuildRcSend(p, s);
    p->bth().set_fecn(true);
    return p;
  }
  // What the HCA sends back for one marked packet arriving at 100 ns.
  std::vector<DeviceHarness::Sent> Answers(bool ack_req) {
    h_.Arrive(1, Marked(ack_req), 100 * kPsPerNs);
    h_.RunUntil(5 * kPsPerUs);
    return h_.PacketsOn(1);
  }
  std::unique_ptr<policy::InputQueuing> queuing_;
  link::FabricContext ctx_;
  stats::FlowTable flows_;
  std::unique_ptr<hca::Hca> hca_;
  DeviceHarness h_;
};

TEST_F(HcaHooks, FecnWithoutAckReqIsAnsweredAtOnceByACnpToTheSourceQp) {
  auto out = Answers(false);
  ASSERT_EQ(out.size(), 1u);
  engine::Packet cnp = out[0].Header();
  EXPECT_EQ(cnp.bth().opcode(), wire::opcode::kCnp);
  EXPECT_TRUE(cnp.bth().becn());
  EXPECT_FALSE(cnp.bth().fecn());
  EXPECT_EQ(cnp.bth().dest_qp(), 0x123u);
  EXPECT_EQ(cnp.lrh().dlid(), 5);
  EXPECT_EQ(cnp.lrh().slid(), 20);
  EXPECT_EQ(out[0].payload, 0u);
  // Sent at the head's arrival, before the tail is in.
  EXPECT_EQ(out[0].e.time - 10 * kPsPerNs, 100 * kPsPerNs);
}

TEST_F(HcaHooks, FecnWithAckReqRidesOnTheAckAsBecn) {
  auto out = Answers(true);
  ASSERT_EQ(out.size(), 1u);
  engine::Packet ack = out[0].Header();
  EXPECT_EQ(ack.bth().opcode(), wire::opcode::kRcAcknowledge);
  EXPECT_TRUE(ack.bth().becn());
  EXPECT_EQ(ack.bth().dest_qp(), 0x123u);
}

}  // namespace
}  // namespace ibemu::testing
