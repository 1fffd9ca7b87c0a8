// DBBM and DDBBM (docs/cc/dbbm.md): the destination detector's frames, the notice MAD, and the
// source's queue choice per message, driven without a fabric.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "emulator/cc/dbbm/congestion_detector.h"
#include "emulator/cc/dbbm/dbbm_ca.h"
#include "emulator/cc/dbbm/notice_mad.h"
#include "emulator/cc/dbbm/queue_map.h"
#include "emulator/engine/packet.h"
#include "tests/unit/cc_fake_views.h"

namespace ibemu::cc::dbbm {
namespace {

Options Ddbbm() {
  Options o;
  o.queues = 4;
  o.dynamic = true;
  return o;  // DT 0.95, LT 0.2, SIT 6, at least NS = 1 heavy source
}

std::vector<Notice> Frame(CongestionDetector& d, const std::vector<std::pair<uint16_t, int>>& rx) {
  std::vector<Notice> out;
  for (auto [src, bytes] : rx) d.OnPacket(src, static_cast<uint32_t>(bytes), &out);
  d.EndFrame(&out);
  return out;
}

TEST(DdbbmDetector, SetsCbAboveDtWithAHeavySourceAndClearsItBelowLtOnly) {
  CongestionDetector d(Ddbbm(), 1000, 64);
  // 960 of 1000 bytes, 600 from one source (heavy: above 6/64 of 960 = 90): congested, and
  // every source of the frame is told.
  std::vector<Notice> n = Frame(d, {{5, 600}, {6, 300}, {7, 60}});
  EXPECT_TRUE(d.congested());
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0].source, 5);
  EXPECT_TRUE(n[0].congested && n[1].congested && n[2].congested);
  // While congested a new source is told at its first packet, once.
  std::vector<Notice> now;
  d.OnPacket(9, 100, &now);
  d.OnPacket(9, 100, &now);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].source, 9);
  EXPECT_TRUE(now[0].congested);
  // Between LT and DT nothing changes (hysteresis), even after 9's 200 bytes.
  EXPECT_TRUE(Frame(d, {{5, 300}}).empty());
  EXPECT_TRUE(d.congested());
  // Below LT: over, and each source told is told it ended.
  n = Frame(d, {{5, 150}});
  EXPECT_FALSE(d.congested());
  ASSERT_EQ(n.size(), 4u);
  for (const Notice& x : n) EXPECT_FALSE(x.congested);
  // Not told again: a new episode starts from an empty NBV.
  EXPECT_TRUE(Frame(d, {{5, 100}}).empty());
}

TEST(DdbbmDetector, UniformTrafficAboveDtIsCongestionOnlyWithoutTheSourceTest) {
  std::vector<std::pair<uint16_t, int>> uniform;
  for (uint16_t s = 1; s <= 64; ++s) uniform.push_back({s, 15});  // 960 bytes, 15 each
  CongestionDetector sit6(Ddbbm(), 1000, 64);
  Frame(sit6, uniform);
  EXPECT_FALSE(sit6.congested());
  Options o = Ddbbm();
  o.sit = 0;  // the paper's #1B with SIT 0: every fast receiver looks congested
  CongestionDetector sit0(o, 1000, 64);
  EXPECT_EQ(Frame(sit0, uniform).size(), 64u);
  EXPECT_TRUE(sit0.congested());
}

TEST(DdbbmDetector, TheSourceCountIsAtLeastNsOrWithTheLiteralReadingMoreThanNs) {
  std::vector<std::pair<uint16_t, int>> one_heavy = {{3, 500}};
  for (uint16_t s = 10; s < 41; ++s) one_heavy.push_back({s, 15});  // 965 bytes, one heavy
  CongestionDetector at_least(Ddbbm(), 1000, 64);
  Frame(at_least, one_heavy);
  EXPECT_TRUE(at_least.congested());
  Options o = Ddbbm();
  o.ns_at_least = false;  // "higher than the NS register": two heavy sources with NS 1
  CongestionDetector more(o, 1000, 64);
  Frame(more, one_heavy);
  EXPECT_FALSE(more.congested());
  one_heavy.push_back({4, 200});
  Frame(more, one_heavy);
  EXPECT_TRUE(more.congested());
}

TEST(DdbbmNotice, IsAVendorClassSendMadCarryingTheLidAndTheState) {
  std::array<uint8_t, 256> mad{};
  EncodeNotice(mad.data(), 0x1234, 0x0031, true);
  EXPECT_EQ(mad[0], 1);     // base version
  EXPECT_EQ(mad[1], 0x0E);  // vendor class, range 1
  EXPECT_EQ(mad[3], 0x03);  // Send
  EXPECT_EQ(mad[16], 0xFF);
  EXPECT_EQ(mad[17], 0x10);
  EXPECT_EQ(mad[23], 1);  // attribute modifier: congested
  uint16_t lid = 0;
  bool congested = false;
  ASSERT_TRUE(DecodeNotice(mad.data(), &lid, &congested));
  EXPECT_EQ(lid, 0x31);
  EXPECT_TRUE(congested);
  EncodeNotice(mad.data(), 2, 7, false);
  ASSERT_TRUE(DecodeNotice(mad.data(), &lid, &congested));
  EXPECT_FALSE(congested);
  mad[1] = 0x04;  // a PerfMgt MAD is not a notice
  EXPECT_FALSE(DecodeNotice(mad.data(), &lid, &congested));
}

// An HCA with one port of LID 3 whose QPs go to `remote`; timers and MADs sent are kept.
class View : public testing::FakeHcaView {
 public:
  uint16_t remote = 9;
  struct Mad {
    uint16_t dlid;
    int sl, vl;
    std::array<uint8_t, 256> bytes;
  };
  std::vector<Mad> mads;
  std::vector<SimTime> timers;
  uint16_t QpRemoteLid(uint32_t) const override { return remote; }
  uint16_t Lid(int) const override { return 3; }
  int Sl2Vl(int, int sl) const override { return sl; }
  void PostTimer(SimTime t, uint32_t, uint64_t) override { timers.push_back(t); }
  void SendMad(int, uint16_t dlid, int sl, int vl, const uint8_t* m) override {
    Mad x{dlid, sl, vl, {}};
    std::copy(m, m + 256, x.bytes.begin());
    mads.push_back(x);
  }
};

MessageRoute Route(DbbmCa& ca, View& h) {
  MessageRoute m{0, 0, 0};
  ca.RouteMessage(h, 0, m);
  return m;
}

TEST(DdbbmSource, PicksTheQueueFromTheDestinationAndItsStatusBitInEitherForm) {
  View h;
  DbbmCa ib(Ddbbm());
  EXPECT_EQ(QueueOf(9, false, 4), 1);
  MessageRoute m = Route(ib, h);
  EXPECT_EQ(m.sl, 1);  // 9 mod 4
  EXPECT_EQ(m.vl, 1);
  EXPECT_EQ(m.resv6a, 0);
  std::array<uint8_t, 256> notice{};
  EncodeNotice(notice.data(), 1, 9, true);
  EXPECT_TRUE(ib.OnMad(h, 1, 9, notice.data()));
  m = Route(ib, h);
  EXPECT_EQ(m.sl, 4);  // the dynamic queue's SL
  EXPECT_EQ(m.vl, 4);
  // Another destination is not affected.
  h.remote = 10;
  EXPECT_EQ(Route(ib, h).sl, 2);

  Options po = Ddbbm();
  po.form = Form::kPaper;
  DbbmCa paper(po);
  h.remote = 9;
  ASSERT_TRUE(paper.OnMad(h, 1, 9, notice.data()));
  m = Route(paper, h);
  EXPECT_EQ(m.sl, 0);  // the SL is left alone: the header's bit and the switches choose
  EXPECT_EQ(m.vl, 4);
  EXPECT_EQ(m.resv6a, kCbInResv6a);
  EncodeNotice(notice.data(), 2, 9, false);
  ASSERT_TRUE(paper.OnMad(h, 1, 9, notice.data()));
  m = Route(paper, h);
  EXPECT_EQ(m.vl, 1);
  EXPECT_EQ(m.resv6a, 0);

  Options so = Ddbbm();
  so.dynamic = false;  // DBBM: notices change nothing
  DbbmCa dbbm(so);
  EncodeNotice(notice.data(), 3, 9, true);
  dbbm.OnMad(h, 1, 9, notice.data());
  EXPECT_EQ(Route(dbbm, h).sl, 1);
}

TEST(DdbbmDestination, FramesAlignOnTfAndNoticesGoInTheSourcesDbbmQueue) {
  View h;
  h.now = 12;
  Options o = Ddbbm();
  o.tf = 10000;  // 10 ns of FakeHcaView's 1 byte per ns: 10 bytes a frame
  DbbmCa ca(o);
  engine::Packet p;
  p.hdr_len = 20;
  p.payload_len = 0;
  p.lrh().set_slid(6);
  ca.OnReceive(h, 1, p);  // 26 bytes on the wire, from LID 6
  ASSERT_EQ(h.timers.size(), 1u);
  EXPECT_EQ(h.timers[0], 10000);  // the next multiple of TF
  h.now = 10000;
  ca.OnTimer(h, 1, 0);
  ASSERT_EQ(h.mads.size(), 1u);
  EXPECT_EQ(h.mads[0].dlid, 6);
  EXPECT_EQ(h.mads[0].sl, 2);  // 6 mod 4: never the dynamic queue
  EXPECT_EQ(h.mads[0].vl, 2);
  uint16_t lid;
  bool congested;
  ASSERT_TRUE(DecodeNotice(h.mads[0].bytes.data(), &lid, &congested));
  EXPECT_EQ(lid, 3);
  EXPECT_TRUE(congested);
  EXPECT_EQ(h.timers.size(), 2u);  // the frames go on while congested
}

}  // namespace
}  // namespace ibemu::cc::dbbm
