// The management plane inside the fabric: directed-route hop handling (IBA 14.2.2), the SMA and
// PMA answering real MADs that travel as VL15 / QP1 packets through switches, Sets that change
// the data plane, and the status or silence the spec prescribes for bad MADs.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <optional>
#include <vector>

#include "common/mad/gs_attributes.h"
#include "common/mad/mad_header.h"
#include "common/mad/smp_attributes.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "emulator/mgmt/smi.h"
#include "emulator/scenario/scenario.h"
#include "emulator/switch/switch.h"

namespace ibemu {
namespace {

using namespace mad;

// The source of the events that stand for a program's MADs, after every device in the order of
// events.
constexpr engine::LpId kClientSource = 0xFFFFFFFE;

MadBuffer DrSmp(uint8_t method_, uint16_t attr_id, uint32_t mod, std::vector<uint8_t> path) {
  MadBuffer b{};
  b[0] = 1;
  b[1] = mgmt_class::kSubnDirected;
  b[2] = 1;
  b[3] = method_;
  Set(b.data(), hdr::kTid, 0x1234);
  Set(b.data(), hdr::kAttrId, attr_id);
  Set(b.data(), hdr::kAttrMod, mod);
  Set(b.data(), hdr::kDrHopCnt, path.size());
  Set(b.data(), hdr::kDrSlid, kPermissiveLid);
  Set(b.data(), hdr::kDrDlid, kPermissiveLid);
  for (size_t i = 0; i < path.size(); ++i) b[128 + 1 + i] = path[i];
  return b;
}

MadBuffer LidMad(uint8_t cls, uint8_t method_, uint16_t attr_id, uint32_t mod) {
  MadBuffer b{};
  b[0] = 1;
  b[1] = cls;
  b[2] = 1;
  b[3] = method_;
  Set(b.data(), hdr::kTid, 0x99);
  Set(b.data(), hdr::kAttrId, attr_id);
  Set(b.data(), hdr::kAttrMod, mod);
  return b;
}

// ---- SMI rules on their own ----

TEST(Smi, OutgoingPathRecordsReturnPortsAndEndsLocal) {
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 4});
  MadView m{b.data()};
  mgmt::SmiDecision d = mgmt::SmiSend(m, false, 1, 1);
  EXPECT_EQ(d.action, mgmt::SmiAction::kForward);
  EXPECT_EQ(d.port, 1);
  EXPECT_EQ(m.hop_ptr(), 1);
  d = mgmt::SmiReceive(m, true, 3, 36);  // first switch, arrived on 3, leaves on 4
  EXPECT_EQ(d.action, mgmt::SmiAction::kForward);
  EXPECT_EQ(d.port, 4);
  EXPECT_EQ(m.return_path(1), 3);
  d = mgmt::SmiReceive(m, true, 5, 36);  // second switch: the end of the path
  EXPECT_EQ(d.action, mgmt::SmiAction::kLocal);
  EXPECT_EQ(m.return_path(2), 5);
  EXPECT_EQ(m.hop_ptr(), 3);
  m.set_direction(true);
  d = mgmt::SmiSend(m, true, 0, 36);  // the response goes back where it came from
  EXPECT_EQ(d.action, mgmt::SmiAction::kForward);
  EXPECT_EQ(d.port, 5);
  d = mgmt::SmiReceive(m, true, 4, 36);
  EXPECT_EQ(d.action, mgmt::SmiAction::kForward);
  EXPECT_EQ(d.port, 3);
  d = mgmt::SmiReceive(m, false, 1, 1);
  EXPECT_EQ(d.action, mgmt::SmiAction::kLocal);
  EXPECT_EQ(m.hop_ptr(), 0);
}

TEST(Smi, BadHopPointersAndPortsAreDiscarded) {
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 4});
  MadView m{b.data()};
  m.set_hop_ptr(3);  // an SM must start at 0
  EXPECT_EQ(mgmt::SmiSend(m, false, 1, 1).action, mgmt::SmiAction::kDrop);
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 40});
  m.set_hop_ptr(1);
  EXPECT_EQ(mgmt::SmiReceive(m, true, 1, 36).action, mgmt::SmiAction::kDrop);  // port 40 of 36
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 0});
  m.set_hop_ptr(1);
  EXPECT_EQ(mgmt::SmiReceive(m, true, 1, 36).action, mgmt::SmiAction::kDrop);  // port 0 is no exit
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 2, 3});
  m.set_hop_ptr(1);
  EXPECT_EQ(mgmt::SmiReceive(m, false, 1, 2).action, mgmt::SmiAction::kDrop);  // CAs never relay
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 2});
  m.set_hop_ptr(0);  // arrived without the sender advancing it
  EXPECT_EQ(mgmt::SmiReceive(m, true, 1, 36).action, mgmt::SmiAction::kDrop);
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1});
  Set(b.data(), hdr::kDrDlid, 7);  // a LID-routed part: not supported, dropped
  EXPECT_EQ(mgmt::SmiSend(m, false, 1, 1).action, mgmt::SmiAction::kDrop);
}

// ---- the agents, through the fabric ----

class Recorder : public mgmt::MadClient {
 public:
  bool Deliver(engine::LpId lp, int port, const engine::MadBytes& mad,
               const mgmt::MadAddress& from) override {
    got.push_back({lp, port, mad, from});
    return true;
  }
  struct Got {
    engine::LpId lp;
    int port;
    engine::MadBytes mad;
    mgmt::MadAddress from;
  };
  std::vector<Got> got;
};

class Fabric : public ::testing::Test {
 protected:
  void Build(const std::string& sm = "builtin") {
    s_ = scenario::ScenarioFromTopology(std::string(IBEMU_SOURCE_DIR) +
                                        "/configs/topologies/testbed.topo");
    s_.subnet_manager = sm;
    Start();
  }
  void BuildFrom(const std::string& yaml) {
    s_ = scenario::LoadScenario(std::string(IBEMU_SOURCE_DIR) + "/" + yaml);
    Start();
  }
  void Start() {
    f_ = fabric::BuildFabric(s_);
    part_ = std::make_unique<engine::Partition>(f_->devices.size());
    for (auto& d : f_->devices) {
      part_->Add(d.get());
      d->SetMadClient(&rec_);
    }
    part_->StartAll();
    part_->RunUntil(10 * link::kPsPerUs);  // credits exchanged
  }
  int Node(const std::string& n) { return s_.topo.FindNode(n); }
  mgmt::ManagedNode& Dev(const std::string& n) { return *f_->devices[Node(n)]; }

  // Sends `mad` from the program at node:port, as the umad service does, and runs 50 us.
  void Send(const std::string& node, int port, const MadBuffer& mad, uint16_t dlid = 0,
            uint32_t dest_qp = 0) {
    engine::Packet* pkt = part_->pool().Get();
    mgmt::MadAddress a;
    a.dlid = dlid;
    a.dest_qp = dest_qp;
    a.qkey = dest_qp ? kQp1QKey : 0;
    mgmt::BuildMadPacket(pkt, a);
    std::copy(mad.begin(), mad.end(), pkt->mad->begin());
    engine::Event e;
    e.time = part_->now();
    e.lp = static_cast<engine::LpId>(Node(node));
    e.src = kClientSource;
    e.seq = seq_++;
    e.kind = mgmt::ManagedNode::kMadFromClient;
    e.port = static_cast<uint16_t>(port);
    e.pkt = pkt;
    part_->Schedule(e);
    part_->RunUntil(part_->now() + 50 * link::kPsPerUs);
  }
  // The one MAD that came back, or fails.
  MadBuffer Reply() {
    EXPECT_EQ(rec_.got.size(), 1u);
    MadBuffer b{};
    if (!rec_.got.empty()) std::copy(rec_.got[0].mad.begin(), rec_.got[0].mad.end(), b.begin());
    rec_.got.clear();
    return b;
  }

  scenario::Scenario s_;
  std::unique_ptr<fabric::Fabric> f_;
  std::unique_ptr<engine::Partition> part_;
  Recorder rec_;
  uint64_t seq_ = 0;
};

TEST_F(Fabric, DirectedRouteNodeInfoTwoHopsAway) {
  Build("external");
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 4}));
  MadBuffer r = Reply();
  MadView m{r.data()};
  EXPECT_EQ(m.method(), method::kGetResp);
  EXPECT_TRUE(m.dr_direction());
  EXPECT_EQ(Get(r.data(), hdr::kDrStatus), 0u);
  EXPECT_EQ(m.hop_ptr(), 0);
  EXPECT_EQ(m.return_path(1), 1);  // S1 got it on its port 1 (from H1)
  EXPECT_EQ(m.return_path(2), 5);  // S2 got it on its port 5 (from S1)
  const uint8_t* d = r.data() + kSmpDataOffset;
  EXPECT_EQ(Get(d, node_info::kNodeType), node_info::kTypeSwitch);
  EXPECT_EQ(Get(d, node_info::kNodeGuid), 0x2c90200000200u);
  EXPECT_EQ(Get(d, node_info::kNumPorts), 36u);
  EXPECT_EQ(Get(d, node_info::kLocalPortNum), 5u);
  EXPECT_EQ(Get(r.data(), hdr::kTid), 0x1234u);
}

TEST_F(Fabric, DirectedRouteToACaAndItsPortInfo) {
  Build("external");
  Send("H1", 1, DrSmp(method::kGet, attr::kPortInfo, 0, {1, 4, 2}));  // H1 -> S1 -> S2 -> H5
  MadBuffer r = Reply();
  const uint8_t* d = r.data() + kSmpDataOffset;
  EXPECT_EQ(Get(d, port_info::kPortState), port_info::kStateInit);
  EXPECT_EQ(Get(d, port_info::kPortPhysicalState), port_info::kPhysLinkUp);
  EXPECT_EQ(Get(d, port_info::kLid), 0u);
  EXPECT_EQ(Get(d, port_info::kLinkWidthActive), 2u);  // 4x
  EXPECT_EQ(Get(d, port_info::kLinkSpeedActive), 2u);  // DDR
  EXPECT_EQ(Get(d, port_info::kLocalPortNum), 1u);
  // Hop count 0: the SM's own port.
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeDescription, 0, {}));
  r = Reply();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(r.data() + kSmpDataOffset)), "H1 mlx4_0");
}

TEST_F(Fabric, LidRoutedPartThenDirectedPart) {
  Build("builtin");
  // As ibportstate asks for a switch port's peer: LID-routed from H1 to S2, directed from there
  // out of S2's port 2 (to H5); the answer comes back directed to S2, then LID-routed to H1.
  uint16_t h1 = Dev("H1").port_mgmt(1).lid, s2 = Dev("S2").port_mgmt(0).lid;
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {2});
  Set(b.data(), hdr::kDrSlid, h1);
  Send("H1", 1, b, s2);
  MadBuffer r = Reply();
  EXPECT_EQ(Get(r.data(), hdr::kDrStatus), 0u);
  EXPECT_TRUE(MadView{r.data()}.dr_direction());
  EXPECT_EQ(Get(r.data() + kSmpDataOffset, node_info::kNodeGuid), 0x2c90300000700u);  // H5
  // A LID-routed part after the directed one is not supported: no answer.
  b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1});
  Set(b.data(), hdr::kDrDlid, s2);
  Send("H1", 1, b);
  EXPECT_TRUE(rec_.got.empty());
}

TEST_F(Fabric, BadDirectedRoutesGetNoAnswer) {
  Build("external");
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 30}));  // S1 port 30: no cable
  EXPECT_TRUE(rec_.got.empty());
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 37}));  // beyond S1's 36 ports
  EXPECT_TRUE(rec_.got.empty());
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {2}));  // H1 has no port 2
  EXPECT_TRUE(rec_.got.empty());
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1, 4});
  Set(b.data(), hdr::kDrHopPtr, 2);
  Send("H1", 1, b);
  EXPECT_TRUE(rec_.got.empty());
  // The fabric keeps answering.
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {1}));
  EXPECT_EQ(Get(Reply().data() + kSmpDataOffset, node_info::kNodeGuid), 0x2c90200000100u);
}

TEST_F(Fabric, BadVersionsMethodsAttributesAndModifiersGetTheirStatus) {
  Build("external");
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1});
  b[2] = 2;  // SMPs are class version 1
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadVersion);
  Send("H1", 1, DrSmp(method::kSend, attr::kNodeInfo, 0, {1}));
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadMethod);
  Send("H1", 1, DrSmp(method::kGet, 0x00FE, 0, {1}));
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadMethodAttr);
  Send("H1", 1, DrSmp(method::kSet, attr::kNodeInfo, 0, {1}));
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadMethodAttr);
  Send("H1", 1, DrSmp(method::kGet, attr::kPortInfo, 37, {1}));  // S1 has 36 ports
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadAttrValue);
  Send("H1", 1, DrSmp(method::kGet, attr::kSwitchInfo, 0, {}));  // a CA is no switch
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadMethodAttr);
}

TEST_F(Fabric, TruncatedMadIsDroppedAndCountedAsAReceiveError) {
  Build("external");
  // A DR NodeInfo whose packet carries 200 bytes of MAD instead of 256, arriving at S1 port 1.
  engine::Packet* pkt = part_->pool().Get();
  mgmt::MadAddress a;
  a.vl = 15;
  a.slid = a.dlid = kPermissiveLid;
  mgmt::BuildMadPacket(pkt, a);
  MadBuffer b = DrSmp(method::kGet, attr::kNodeInfo, 0, {1});
  Set(b.data(), hdr::kDrHopPtr, 1);
  std::copy(b.begin(), b.end(), pkt->mad->begin());
  pkt->payload_len = 200;
  pkt->lrh().set_pkt_len(pkt->pkt_len_words());
  engine::Event e;
  e.time = part_->now();
  e.lp = static_cast<engine::LpId>(Node("S1"));
  e.src = kClientSource;
  e.kind = engine::kPacketArrive;
  e.port = 1;
  e.b = static_cast<uint64_t>(part_->now());
  e.pkt = pkt;
  part_->Schedule(e);
  part_->RunUntil(part_->now() + 50 * link::kPsPerUs);
  EXPECT_TRUE(rec_.got.empty());
  EXPECT_EQ(Dev("S1").port_mgmt(1).counters.rcv_errors, 1u);
  // The same SMP whole is answered.
  Send("H1", 1, DrSmp(method::kGet, attr::kNodeInfo, 0, {1}));
  EXPECT_EQ(Get(Reply().data() + kSmpDataOffset, node_info::kNodeType), node_info::kTypeSwitch);
}

TEST_F(Fabric, MKeyProtectsTheSmaAsTheLevelSays) {
  Build("external");
  // Give H5's port an M_Key with protection level 1, by DR from H1.
  MadBuffer b = DrSmp(method::kGet, attr::kPortInfo, 0, {1, 4, 2});
  Send("H1", 1, b);
  MadBuffer cur = Reply();
  b = DrSmp(method::kSet, attr::kPortInfo, 0, {1, 4, 2});
  std::copy(cur.begin() + kSmpDataOffset, cur.begin() + kSmpDataOffset + kSmpDataBytes,
            b.begin() + kSmpDataOffset);
  uint8_t* d = b.data() + kSmpDataOffset;
  Set(d, port_info::kPortPhysicalState, 0);
  Set(d, port_info::kPortState, 0);
  Set(d, port_info::kMKey, 0x1122334455667788ull);
  Set(d, port_info::kMKeyProtectBits, 1);
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), 0u);
  // Level 1: a Get without the key is answered with M_Key shown as 0; a Set is dropped.
  Send("H1", 1, DrSmp(method::kGet, attr::kPortInfo, 0, {1, 4, 2}));
  EXPECT_EQ(Get(Reply().data() + kSmpDataOffset, port_info::kMKey), 0u);
  Send("H1", 1, b);  // the Set again, without the key in the MAD header
  EXPECT_TRUE(rec_.got.empty());
  EXPECT_EQ(Dev("H5").port_mgmt(1).m_key_violations, 1u);
  // With the key, the Get shows it.
  MadBuffer g = DrSmp(method::kGet, attr::kPortInfo, 0, {1, 4, 2});
  Set(g.data(), hdr::kMKey, 0x1122334455667788ull);
  Send("H1", 1, g);
  EXPECT_EQ(Get(Reply().data() + kSmpDataOffset, port_info::kMKey), 0x1122334455667788ull);
}

TEST_F(Fabric, PortStateMachineAndLidsBySet) {
  Build("external");
  auto set_portinfo = [&](std::vector<uint8_t> path, int port, auto fill) {
    MadBuffer b = DrSmp(method::kGet, attr::kPortInfo, static_cast<uint32_t>(port), path);
    Send("H1", 1, b);
    MadBuffer cur = Reply();
    b = DrSmp(method::kSet, attr::kPortInfo, static_cast<uint32_t>(port), path);
    std::copy(cur.begin() + kSmpDataOffset, cur.begin() + kSmpDataOffset + kSmpDataBytes,
              b.begin() + kSmpDataOffset);
    Set(b.data() + kSmpDataOffset, port_info::kPortPhysicalState, 0);  // as an SM does
    Set(b.data() + kSmpDataOffset, port_info::kPortState, 0);
    fill(b.data() + kSmpDataOffset);
    Send("H1", 1, b);
    return Reply();
  };
  // Init -> Active is not a legal step; Init -> Armed -> Active is.
  MadBuffer r = set_portinfo({1}, 1, [](uint8_t* d) { Set(d, port_info::kPortState, 4); });
  EXPECT_EQ(Get(r.data(), hdr::kDrStatus), status::kBadAttrValue);
  r = set_portinfo({1}, 1, [](uint8_t* d) { Set(d, port_info::kPortState, 3); });
  EXPECT_EQ(Get(r.data(), hdr::kDrStatus), 0u);
  EXPECT_EQ(Get(r.data() + kSmpDataOffset, port_info::kPortState), 3u);
  r = set_portinfo({1}, 1, [](uint8_t* d) { Set(d, port_info::kPortState, 4); });
  EXPECT_EQ(Get(r.data() + kSmpDataOffset, port_info::kPortState), 4u);
  EXPECT_TRUE(Dev("S1").port_active(1));
  // LID and SM LID on switch port 0.
  r = set_portinfo({1}, 0, [](uint8_t* d) {
    Set(d, port_info::kLid, 7);
    Set(d, port_info::kMasterSmLid, 3);
  });
  EXPECT_EQ(Dev("S1").port_mgmt(0).lid, 7);
  EXPECT_EQ(Dev("S1").port_mgmt(0).sm_lid, 3);
}

TEST_F(Fabric, DisablingAPortTakesBothEndsDownAndBothSwitchesNotice) {
  Build("builtin");
  engine::Event e;
  e.time = part_->now();
  e.lp = static_cast<engine::LpId>(Node("S1"));
  e.src = 0xFFFFFFFD;
  e.kind = mgmt::ManagedNode::kLinkCommand;
  e.port = 4;  // to S2
  e.a = 0;
  part_->Schedule(e);
  part_->RunUntil(part_->now() + 10 * link::kPsPerUs);
  for (const char* n : {"S1", "S2"}) {
    int p = std::string(n) == "S1" ? 4 : 5;
    EXPECT_FALSE(Dev(n).link_up(p)) << n;
    EXPECT_EQ(Dev(n).port_state(p), port_info::kStateDown) << n;
    EXPECT_EQ(Dev(n).CountersNow(p).link_downed, 1u) << n;
    EXPECT_TRUE(Dev(n).node_mgmt().sw.port_state_change) << n;
  }
  EXPECT_EQ(Dev("S1").phys_state(4), port_info::kPhysDisabled);
  EXPECT_EQ(Dev("S2").phys_state(5), port_info::kPhysPolling);
}

TEST_F(Fabric, LftAndSl2VlSetsTakeEffect) {
  Build("external");
  MadBuffer b = DrSmp(method::kSet, attr::kLinearForwardingTable, 0, {1});
  uint8_t* d = b.data() + kSmpDataOffset;
  std::fill(d, d + 64, 0xFF);
  d[5] = 4;  // LID 5 -> port 4
  Send("H1", 1, b);
  MadBuffer r = Reply();
  EXPECT_EQ(r[kSmpDataOffset + 5], 4);
  auto& s1 = static_cast<sw::Switch&>(Dev("S1"));
  EXPECT_EQ(s1.LftEntry(5), 4);
  EXPECT_EQ(s1.lft()[5], 4);
  b = DrSmp(method::kSet, attr::kSl2VlTable, 1u << 8 | 4u, {1});
  for (int sl = 0; sl < 16; ++sl) Set(b.data() + kSmpDataOffset, sl2vl_table::VlOfSl(sl), 0);
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), 0u);
  // A VL this fabric does not have (one data VL) is refused and nothing changes.
  Set(b.data() + kSmpDataOffset, sl2vl_table::VlOfSl(3), 2);
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), status::kBadAttrValue);
  EXPECT_EQ(s1.Sl2Vl(1, 4, 3), 0);
}

// The switch reads one shared SL2VL row while every (input, output) pair maps alike: a Set for
// one pair must take that pair off it and leave every other pair on the configured map.
TEST_F(Fabric, Sl2VlSetForOnePairChangesOnlyThatPair) {
  BuildFrom("tests/data/scenarios/vlarb_set.yaml");  // two data VLs, SL i -> VL i % 2
  auto& s1 = static_cast<sw::Switch&>(Dev("S1"));
  EXPECT_EQ(s1.Sl2Vl(1, 4, 0), 0);
  EXPECT_EQ(s1.Sl2Vl(1, 4, 1), 1);
  MadBuffer b = DrSmp(method::kSet, attr::kSl2VlTable, 1u << 8 | 4u, {1});
  for (int sl = 0; sl < 16; ++sl)
    Set(b.data() + kSmpDataOffset, sl2vl_table::VlOfSl(sl), static_cast<uint64_t>((sl + 1) % 2));
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), 0u);
  EXPECT_EQ(s1.Sl2Vl(1, 4, 0), 1);
  EXPECT_EQ(s1.Sl2Vl(1, 4, 1), 0);
  EXPECT_EQ(s1.Sl2VlEntry(1, 4, 2), 1);
  EXPECT_EQ(s1.Sl2Vl(2, 4, 0), 0);
  EXPECT_EQ(s1.Sl2Vl(1, 3, 1), 1);
  EXPECT_EQ(s1.Sl2Vl(4, 1, 0), 0);
}

TEST_F(Fabric, VlArbSetChangesTheSplitBetweenVls) {
  BuildFrom("tests/data/scenarios/vlarb_set.yaml");
  auto& pc = Dev("H1").port(1).stats;  // octets per SL, as the PMA reports them
  auto window = [&](link::SimTime len) {
    uint64_t v0 = pc.xmit_data_sl[0], v1 = pc.xmit_data_sl[1];
    part_->RunUntil(part_->now() + len);
    return std::pair<double, double>(static_cast<double>(pc.xmit_data_sl[0] - v0),
                                     static_cast<double>(pc.xmit_data_sl[1] - v1));
  };
  part_->RunUntil(100 * link::kPsPerUs);
  auto [a0, a1] = window(200 * link::kPsPerUs);
  EXPECT_NEAR(a1 / a0, 1.0, 0.05) << "default table: equal weights";
  // Low-priority table of H1's port: VL0 weight 33, VL1 weight 99, in 64-byte units: one and
  // three 2074-byte packets (33 blocks) per turn. (A VL may start a packet while any weight is
  // left, so weights that are not whole packets round up to them: 16 and 48 would give 1:2.)
  MadBuffer b = DrSmp(method::kSet, attr::kVlArbTable, vlarb_table::kLowFirst << 16, {});
  uint8_t* d = b.data() + kSmpDataOffset;
  Set(d, vlarb_table::Vl(0), 0);
  Set(d, vlarb_table::Weight(0), 33);
  Set(d, vlarb_table::Vl(1), 1);
  Set(d, vlarb_table::Weight(1), 99);
  Send("H1", 1, b);
  EXPECT_EQ(Get(Reply().data(), hdr::kDrStatus), 0u);
  window(20 * link::kPsPerUs);  // settle
  auto [b0, b1] = window(200 * link::kPsPerUs);
  EXPECT_NEAR(b1 / b0, 3.0, 0.3) << "VL1 gets three times VL0's share";
}

// PortXmitWait counts the ticks a port had data and sent none. On the test bed with every flow on
// (scenario 1), S2's port to H5 is the hot spot: 4x DDR sends a 2074-byte packet in 1.037 us but
// H5's host takes 1.260 us to drain its 2048 bytes at 13 Gbit/s, so the port waits for credits
// about 0.223 us per packet, 17.7 % of the time, less up to one 16 ns tick per wait lost to whole
// ticks: 13 or 14 ticks in 78.75. S2's port to H4 carries F1, which H1's host limits to the rate
// H4 drains at: no wait.
TEST_F(Fabric, PortXmitWaitCountsTheTicksAHotSpotPortWaitsForCredits) {
  BuildFrom("configs/scenarios/testbed-scenario1.yaml");
  auto& s2 = Dev("S2");
  const int to_h4 = 1, to_h5 = 2;
  const link::SimTime tick = 8 * 2 * link::kPsPerNs;  // 8 symbol times of 4x DDR (2 ns each)
  part_->RunUntil(4500 * link::kPsPerUs);             // all four contributors have started
  uint64_t h5_0 = s2.CountersNow(to_h5).xmit_wait, h4_0 = s2.CountersNow(to_h4).xmit_wait;
  const link::SimTime window = 400 * link::kPsPerUs;
  part_->RunUntil(part_->now() + window);
  double ticks = static_cast<double>(window / tick);
  double hot = static_cast<double>(s2.CountersNow(to_h5).xmit_wait - h5_0) / ticks;
  double cold = static_cast<double>(s2.CountersNow(to_h4).xmit_wait - h4_0) / ticks;
  std::printf("PortXmitWait over 400 us: hot-spot port %.4f, F1's port %.4f of the ticks\n", hot,
              cold);
  EXPECT_GT(hot, 0.14) << "the hot-spot port waited for credits less than expected";
  EXPECT_LT(hot, 0.18) << "the hot-spot port waited more than the drain rate allows";
  EXPECT_LT(cold, 0.005) << "F1's port waited although its receiver keeps up";

  // The PMA reports the same count (32-bit PortCounters) between two direct reads.
  uint16_t lid = s2.port_mgmt(0).lid;
  MadBuffer pc = LidMad(mgmt_class::kPerf, method::kGet, attr::kPortCounters, 0);
  Set(pc.data() + kGsDataOffset, port_counters::kPortSelect, to_h5);
  uint64_t before = s2.CountersNow(to_h5).xmit_wait;
  Send("H1", 1, pc, lid, 1);
  uint64_t after = s2.CountersNow(to_h5).xmit_wait;
  MadBuffer r = Reply();
  EXPECT_EQ(Get(r.data(), hdr::kStatus), 0u);
  uint64_t reported = Get(r.data() + kGsDataOffset, port_counters::kPortXmitWait);
  EXPECT_GE(reported, before);
  EXPECT_LE(reported, after);
  EXPECT_GT(after, before) << "the port stopped waiting while the flows still run";
}

// Every packet every port puts on its link: when, where and which.
class TransmitLog : public link::PacketTap {
 public:
  void OnTransmit(link::SimTime t, engine::LpId lp, int port, const engine::Packet& p) override {
    log.push_back({t, lp, port, p.id});
  }
  struct Tx {
    link::SimTime t;
    engine::LpId lp;
    int port;
    uint64_t id;
    bool operator==(const Tx&) const = default;
  };
  std::vector<Tx> log;
};

// Sets the rule of a wake-up after every VL15 packet for its lifetime.
class UnconditionalVl15Wake {
 public:
  explicit UnconditionalVl15Wake(bool on) { link::Device::set_unconditional_vl15_wake(on); }
  ~UnconditionalVl15Wake() { link::Device::set_unconditional_vl15_wake(false); }
};

// After an SMP leaves a port, the wake-up at its end is posted only when it could act
// (Device::WakeAfterVl15): held back otherwise, posted with its reserved number when anything
// asks about the port's wake-ups or gives it work before then, and otherwise folded into the
// digest where it would have run. Against the rule of a wake-up after every SMP, in a run where
// SMPs cross links and switches busy with data in both directions at the same picoseconds
// (cut-through releases at the instant an SMP's tail leaves, heads registering then): every
// transmit the same, and every device's digest (each event it handled, in order) the same.
TEST_F(Fabric, WakeUpsHeldBackAfterSmpsChangeNoEventOfARunWithData) {
  struct Result {
    std::vector<TransmitLog::Tx> log;
    std::vector<uint64_t> digest, events, dropped;  // per device
    link::Device::HeldWakeCounts held;              // over all devices
    uint64_t dropped_at_end = 0;  // still held when the run ended, due before its end
    size_t replies = 0;
  };
  const int kSmps = 3000;
  const link::SimTime kStarted = 10 * link::kPsPerUs;  // where Start leaves the clock
  auto run = [&](bool unconditional) -> Result {
    UnconditionalVl15Wake rule(unconditional);
    s_ = scenario::LoadScenario(std::string(IBEMU_SOURCE_DIR) +
                                "/configs/scenarios/bench/fat-tree-72-uniform80-cc.yaml");
    // SMPs from random hosts at random multiples of 4x QDR's byte time from the end of Start, and
    // constant arrivals: times coincide to the picosecond.
    std::vector<link::SimTime> at(kSmps);
    std::vector<uint64_t> rnd(kSmps);
    uint64_t x = 12345;
    link::SimTime t = kStarted;
    for (int i = 0; i < kSmps; ++i) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      t += 250 * (200 + static_cast<link::SimTime>(x >> 33) % 400);  // 4x QDR: 250 ps a byte
      at[i] = t;
      rnd[i] = x;
    }
    // The data stops before the last tenth of the SMPs, which then cross a fabric gone quiet:
    // the run ends with some of their wake-ups still held back.
    for (auto& [node, list] : s_.sources)
      for (auto& src : list) {
        src.arrival = hca::Arrival::kConstant;
        src.stop = at[kSmps * 9 / 10];
      }
    rec_.got.clear();
    Start();
    EXPECT_EQ(part_->now(), kStarted);
    TransmitLog tap;
    for (auto& d : f_->devices) d->SetTap(&tap);
    // 4 leaves of 18 hosts (ports 1-18) and 18 uplinks (19-36); a spine's port l goes to leaf l.
    // The SMPs go to a spine, to another leaf and to a host behind it.
    std::vector<int> hosts;
    for (int n = 0; n < static_cast<int>(s_.topo.nodes.size()); ++n)
      if (s_.topo.nodes[n].type == topology::NodeType::kCa) hosts.push_back(n);
    EXPECT_EQ(hosts.size(), 72u);
    const std::vector<std::vector<uint8_t>> paths = {
        {1, 19}, {1, 20, 2}, {1, 21, 3, 5}, {1, 36, 4, 18}, {1, 27, 1, 9}};
    for (int i = 0; i < kSmps; ++i) {
      engine::Packet* pkt = part_->pool().Get();
      mgmt::BuildMadPacket(pkt, mgmt::MadAddress{});
      MadBuffer mad = DrSmp(method::kGet, attr::kNodeInfo, 0, paths[(rnd[i] >> 20) % paths.size()]);
      std::copy(mad.begin(), mad.end(), pkt->mad->begin());
      engine::Event e;
      e.time = at[i];
      e.lp = static_cast<engine::LpId>(hosts[(rnd[i] >> 40) % hosts.size()]);
      e.src = kClientSource;
      e.seq = seq_++;
      e.kind = mgmt::ManagedNode::kMadFromClient;
      e.port = 1;
      e.pkt = pkt;
      part_->Schedule(e);
    }
    // Ends with the last SMPs still on their way.
    const link::SimTime end = at.back() + 2 * link::kPsPerUs;
    part_->RunUntil(end);
    Result r;
    r.log = std::move(tap.log);
    for (auto& d : f_->devices) {
      uint64_t before = d->held_wake_counts().dropped;
      d->FinishStats(end);
      r.dropped_at_end += d->held_wake_counts().dropped - before;
      r.digest.push_back(d->digest());
      r.events.push_back(d->events_handled());
      r.dropped.push_back(d->held_wake_counts().dropped);
      r.held.dropped += d->held_wake_counts().dropped;
      r.held.posted_when_asked += d->held_wake_counts().posted_when_asked;
      r.held.posted_after_event += d->held_wake_counts().posted_after_event;
    }
    r.replies = rec_.got.size();
    return r;
  };
  Result every = run(true), held = run(false);
  EXPECT_GT(every.replies, static_cast<size_t>(kSmps) * 9 / 10) << "SMPs are answered";
  EXPECT_EQ(held.replies, every.replies);
  EXPECT_GT(every.log.size(), 10u * kSmps) << "data moved beside the SMPs";
  EXPECT_EQ(held.log.size(), every.log.size());
  size_t n = std::min(held.log.size(), every.log.size()), first_diff = 0;
  while (first_diff < n && held.log[first_diff] == every.log[first_diff]) ++first_diff;
  if (first_diff < n)
    ADD_FAILURE() << "transmit " << first_diff << " differs: " << held.log[first_diff].t
                  << " ps on " << held.log[first_diff].lp << ":" << held.log[first_diff].port
                  << " against " << every.log[first_diff].t << " ps on " << every.log[first_diff].lp
                  << ":" << every.log[first_diff].port;
  // The rule held some back, and each way of posting one was taken.
  EXPECT_EQ(every.held.dropped + every.held.posted_when_asked + every.held.posted_after_event, 0u);
  EXPECT_GT(held.held.dropped, static_cast<uint64_t>(kSmps) / 10);
  EXPECT_GT(held.held.posted_when_asked, 0u);
  EXPECT_GT(held.held.posted_after_event, 0u);
  EXPECT_GT(held.dropped_at_end, 0u) << "the run ended with none held back";
  ASSERT_EQ(held.digest.size(), every.digest.size());
  for (size_t d = 0; d < every.digest.size(); ++d) {
    EXPECT_EQ(held.digest[d], every.digest[d]) << "device " << d << ": another sequence of events";
    EXPECT_EQ(held.events[d] + held.dropped[d], every.events[d]) << "device " << d;
  }
  std::printf(
      "%zu transmits; wake-ups held back: %llu dropped, %llu posted when asked, %llu "
      "after an event\n",
      every.log.size(), static_cast<unsigned long long>(held.held.dropped),
      static_cast<unsigned long long>(held.held.posted_when_asked),
      static_cast<unsigned long long>(held.held.posted_after_event));
}

TEST_F(Fabric, LidRoutedSmpAndPerfQueryThroughTheFabric) {
  Build("builtin");
  uint16_t h5 = Dev("H5").port_mgmt(1).lid;
  ASSERT_NE(h5, 0);
  Send("H1", 1, LidMad(mgmt_class::kSubnLid, method::kGet, attr::kNodeInfo, 0), h5);
  MadBuffer r = Reply();
  EXPECT_EQ(Get(r.data(), hdr::kStatus), 0u);
  EXPECT_EQ(Get(r.data() + kSmpDataOffset, node_info::kNodeGuid), 0x2c90300000700u);
  // PortCounters of H5 port 1 count the SMP that just went through both ways.
  MadBuffer pc = LidMad(mgmt_class::kPerf, method::kGet, attr::kPortCounters, 0);
  Set(pc.data() + kGsDataOffset, port_counters::kPortSelect, 1);
  Send("H1", 1, pc, h5, 1);
  r = Reply();
  EXPECT_EQ(Get(r.data(), hdr::kStatus), 0u);
  const uint8_t* d = r.data() + kGsDataOffset;
  // One SMP in (NodeInfo) and one PerfMgt Get in; one SMP response out so far (the PortCounters
  // response is read before it is sent). Each is 290 bytes on the wire: 72.5 words.
  EXPECT_EQ(Get(d, port_counters::kPortRcvPkts), 2u);
  EXPECT_EQ(Get(d, port_counters::kPortXmitPkts), 1u);
  EXPECT_EQ(Get(d, port_counters::kPortRcvData), 2u * 290 / 4);
  // A switch's PMA answers through its management port; all ports summed with PortSelect 0xFF.
  uint16_t s2 = Dev("S2").port_mgmt(0).lid;
  Set(pc.data() + kGsDataOffset, port_counters::kPortSelect, 0xFF);
  Send("H1", 1, pc, s2, 1);
  r = Reply();
  EXPECT_EQ(Get(r.data(), hdr::kStatus), 0u);
  EXPECT_GE(Get(r.data() + kGsDataOffset, port_counters::kPortXmitPkts), 2u);
  Set(pc.data() + kGsDataOffset, port_counters::kPortSelect, 1);
  // An unknown PerfMgt attribute and a bad PortSelect.
  Send("H1", 1, LidMad(mgmt_class::kPerf, method::kGet, 0x0077, 0), h5, 1);
  EXPECT_EQ(Get(Reply().data(), hdr::kStatus), status::kBadMethodAttr);
  Set(pc.data() + kGsDataOffset, port_counters::kPortSelect, 9);
  Send("H1", 1, pc, h5, 1);
  EXPECT_EQ(Get(Reply().data(), hdr::kStatus), status::kBadAttrValue);
}

// ---- the Congestion Control Agent (class 0x21, version 2, on QP1) ----

MadBuffer CcMad(uint8_t method_, uint16_t attr_id, uint32_t mod, uint64_t cc_key = 0) {
  MadBuffer b = LidMad(mgmt_class::kCongestion, method_, attr_id, mod);
  b[2] = 2;
  Set(b.data(), hdr::kCcKey, cc_key);
  return b;
}

class Cca : public Fabric {
 protected:
  void SetUp() override {
    Build("builtin");
    s1_ = Dev("S1").port_mgmt(0).lid;
    h5_ = Dev("H5").port_mgmt(1).lid;
  }
  // Sends from H1 to `lid`'s QP1; the answer, or nullopt if none came.
  std::optional<MadBuffer> Ask(uint16_t lid, const MadBuffer& b) {
    Send("H1", 1, b, lid, 1);
    if (rec_.got.empty()) return std::nullopt;
    return Reply();
  }
  uint16_t Status(const std::optional<MadBuffer>& r) {
    return r ? static_cast<uint16_t>(Get(r->data(), hdr::kStatus)) : 0xFFFF;
  }
  uint16_t s1_ = 0, h5_ = 0;
};

TEST_F(Cca, SwitchCongestionSettingSetIsEchoedAndOnlyTheControlMapPartsApply) {
  using namespace switch_congestion_setting;
  MadBuffer b = CcMad(method::kSet, attr::kSwitchCongestionSetting, 0);
  uint8_t* d = b.data() + kGsDataOffset;
  Set(d, kControlMap, 0x4 | 0x10);  // Threshold + Packet_Size, and Marking_Rate
  Set(d, kThreshold, 15);
  Set(d, kPacketSize, 8);
  Set(d, kMarkingRate, 1);
  Set(d, kCsThreshold, 7);          // not in the map: ignored
  d[kVictimMask.byte + 31] = 0x02;  // port 1, not in the map: ignored
  auto r = Ask(s1_, b);
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(MadView{r->data()}.method(), method::kGetResp);
  const uint8_t* rd = r->data() + kGsDataOffset;
  EXPECT_EQ(Get(rd, kThreshold), 15u);
  EXPECT_EQ(Get(rd, kPacketSize), 8u);
  EXPECT_EQ(Get(rd, kMarkingRate), 1u);
  EXPECT_EQ(Get(rd, kCsThreshold), 0u);
  EXPECT_EQ(rd[kVictimMask.byte + 31], 0u);
  const mgmt::CcState& cc = Dev("S1").cc_state(0);
  EXPECT_EQ(cc.sw.threshold, 15);
  EXPECT_EQ(cc.sw.marking_rate, 1);
  // A Get reads the same; every port of the switch reaches the one CCA.
  r = Ask(s1_, CcMad(method::kGet, attr::kSwitchCongestionSetting, 0));
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kThreshold), 15u);
  // A CA has no switch settings; a switch no CA settings or table; modifiers are checked.
  EXPECT_EQ(Status(Ask(h5_, CcMad(method::kGet, attr::kSwitchCongestionSetting, 0))),
            status::kBadMethodAttr);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kGet, attr::kCaCongestionSetting, 0))),
            status::kBadMethodAttr);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kGet, attr::kCongestionControlTable, 0))),
            status::kBadMethodAttr);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kGet, attr::kSwitchCongestionSetting, 1))),
            status::kBadAttrValue);
  // Class version 1 is not the CC class's; Set of a read-only attribute; an unknown one.
  MadBuffer v1 = CcMad(method::kGet, attr::kCongestionInfo, 0);
  v1[2] = 1;
  EXPECT_EQ(Status(Ask(s1_, v1)), status::kBadVersion);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kSet, attr::kCongestionInfo, 0))),
            status::kBadMethodAttr);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kGet, 0x0042, 0))), status::kBadMethodAttr);
}

TEST_F(Cca, SwitchPortSettingsComeInBlocksOf32Ports) {
  using namespace switch_port_congestion_setting;
  // S1 has 36 ports, 0..36 with the management port: blocks 0 and 1.
  MadBuffer b = CcMad(method::kSet, attr::kSwitchPortCongestionSetting, 1);
  uint8_t* e = b.data() + kGsDataOffset + (35 - 32) * kElementBytes;  // port 35
  Set(e, kValid, 1);
  Set(e, kThreshold, 9);
  Set(e, kPacketSize, 4);
  auto r = Ask(s1_, b);
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset + 3 * kElementBytes, kThreshold), 9u);
  const mgmt::CcState& cc = Dev("S1").cc_state(0);
  EXPECT_TRUE(cc.ports[35].valid);
  EXPECT_EQ(cc.ports[35].threshold, 9);
  EXPECT_FALSE(cc.ports[3].valid);
  EXPECT_EQ(Status(Ask(s1_, CcMad(method::kGet, attr::kSwitchPortCongestionSetting, 2))),
            status::kBadAttrValue);
}

TEST_F(Cca, CaSettingsAndTheCongestionControlTable) {
  using namespace congestion_control_table;
  // Paper III's table is 128 entries: CCTI_Limit 127 in both blocks.
  for (int block = 0; block < 2; ++block) {
    MadBuffer b = CcMad(method::kSet, attr::kCongestionControlTable, block);
    uint8_t* d = b.data() + kGsDataOffset;
    Set(d, kCctiLimit, 127);
    for (int i = 0; i < kEntriesPerBlock; ++i) {
      uint8_t* e = d + kEntriesOffset + 2 * i;
      Set(e, kCctShift, 1);
      Set(e, kCctMultiplier, block * 64 + i);
    }
    auto r = Ask(h5_, b);
    ASSERT_EQ(Status(r), 0u) << block;
    EXPECT_EQ(Get(r->data() + kGsDataOffset + kEntriesOffset + 2 * 5, kCctMultiplier),
              static_cast<uint64_t>(block * 64 + 5));
  }
  const mgmt::CcState& cc = Dev("H5").cc_state(1);
  EXPECT_EQ(cc.ccti_limit, 127);
  EXPECT_EQ(cc.cct[70], (1u << 14) | 70u);
  auto r = Ask(h5_, CcMad(method::kGet, attr::kCongestionInfo, 0));
  EXPECT_EQ(Get(r->data() + kGsDataOffset, congestion_info::kControlTableCap), 2u);
  // Out of range: a limit beyond the 128 entries, a block beyond the limit, a third block.
  MadBuffer bad = CcMad(method::kSet, attr::kCongestionControlTable, 0);
  Set(bad.data() + kGsDataOffset, kCctiLimit, 128);
  EXPECT_EQ(Status(Ask(h5_, bad)), status::kBadAttrValue);
  bad = CcMad(method::kSet, attr::kCongestionControlTable, 1);
  Set(bad.data() + kGsDataOffset, kCctiLimit, 10);
  EXPECT_EQ(Status(Ask(h5_, bad)), status::kBadAttrValue);
  EXPECT_EQ(Status(Ask(h5_, CcMad(method::kGet, attr::kCongestionControlTable, 2))),
            status::kBadAttrValue);
  EXPECT_EQ(cc.ccti_limit, 127) << "a refused Set changed the table";

  using namespace ca_congestion_setting;
  MadBuffer cs = CcMad(method::kSet, attr::kCaCongestionSetting, 0);
  uint8_t* d = cs.data() + kGsDataOffset;
  Set(d, kPortControl, 1);
  Set(d, kControlMap, 0x0003);  // SL 0 and 1
  for (int sl = 0; sl < 3; ++sl) {
    uint8_t* e = d + ca_congestion_setting::kEntriesOffset + sl * kEntryBytes;
    Set(e, kCctiTimer, 150);
    Set(e, kCctiIncrease, 1);
    Set(e, kCctiMin, 0);
  }
  r = Ask(h5_, cs);
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(cc.ca.port_control, 1);
  EXPECT_EQ(cc.ca.sl[1].ccti_timer, 150);
  EXPECT_EQ(cc.ca.sl[2].ccti_timer, 0) << "SL 2 is not in Control_Map";
  // A CCTI_Min above CCTI_Limit could never be reached.
  Set(d + ca_congestion_setting::kEntriesOffset, kCctiMin, 200);
  EXPECT_EQ(Status(Ask(h5_, cs)), status::kBadAttrValue);
  EXPECT_EQ(cc.ca.sl[0].ccti_min, 0);
}

TEST_F(Cca, CcKeyRefusesWrongKeysCountsThemAndItsProtectionLapsesAfterTheLease) {
  using namespace congestion_key_info;
  MadBuffer k = CcMad(method::kSet, attr::kCongestionKeyInfo, 0);
  Set(k.data() + kGsDataOffset, kCcKey, 0x42);
  Set(k.data() + kGsDataOffset, kCcKeyProtectBit, 1);
  Set(k.data() + kGsDataOffset, kCcKeyLeasePeriod, 1);
  ASSERT_EQ(Status(Ask(s1_, k)), 0u);
  // Protected: a wrong key gets no answer at all, Get or Set, and each one counts.
  EXPECT_FALSE(Ask(s1_, CcMad(method::kGet, attr::kSwitchCongestionSetting, 0)));
  MadBuffer set = CcMad(method::kSet, attr::kSwitchCongestionSetting, 0, 0x41);
  Set(set.data() + kGsDataOffset, switch_congestion_setting::kControlMap, 4);
  Set(set.data() + kGsDataOffset, switch_congestion_setting::kThreshold, 3);
  EXPECT_FALSE(Ask(s1_, set));
  EXPECT_EQ(Dev("S1").cc_state(0).sw.threshold, 0) << "a Set with the wrong key acted";
  auto r = Ask(s1_, CcMad(method::kGet, attr::kCongestionKeyInfo, 0, 0x42));
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kCcKeyViolations), 2u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kCcKey), 0x42u);
  // The right key is taken, and the lease started by the violations stops.
  Set(set.data(), hdr::kCcKey, 0x42);
  EXPECT_EQ(Status(Ask(s1_, set)), 0u);
  EXPECT_EQ(Dev("S1").cc_state(0).sw.threshold, 3);
  // A violation starts the 1 s lease; once it has run out the protect bit lapses: Gets with the
  // wrong key are answered (CC_Key reads 0), Sets still refused.
  EXPECT_FALSE(Ask(s1_, CcMad(method::kGet, attr::kCongestionInfo, 0)));
  part_->RunUntil(part_->now() + link::kPsPerSec);
  r = Ask(s1_, CcMad(method::kGet, attr::kCongestionKeyInfo, 0, 0x7));
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kCcKey), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kCcKeyProtectBit), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, kCcKeyViolations), 3u);
  Set(set.data(), hdr::kCcKey, 0x7);
  EXPECT_FALSE(Ask(s1_, set));
  // Another node's CCA has its own key (none).
  EXPECT_EQ(Status(Ask(h5_, CcMad(method::kGet, attr::kCongestionKeyInfo, 0, 0x7))), 0u);
}

TEST_F(Cca, TimestampLogAndClassPortInfo) {
  auto r = Ask(s1_, CcMad(method::kGet, attr::kTimestamp, 0));
  ASSERT_EQ(Status(r), 0u);
  // The CCA read the clock between the send and the 50 us Send() runs: 1.024 us ticks.
  uint64_t ticks = Get(r->data() + kGsDataOffset, timestamp::kTimestamp);
  uint64_t now_ticks = static_cast<uint64_t>(part_->now() / (1024 * link::kPsPerNs));
  EXPECT_LE(ticks, now_ticks);
  EXPECT_GE(ticks + 50, now_ticks);
  r = Ask(s1_, CcMad(method::kGet, attr::kCongestionLog, 0));
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kCcLogDataOffset, congestion_log::kLogType),
            congestion_log::kLogTypeSwitch);
  r = Ask(h5_, CcMad(method::kGet, attr::kCongestionLog, 0));
  EXPECT_EQ(Get(r->data() + kCcLogDataOffset, congestion_log::kLogType),
            congestion_log::kLogTypeCa);
  r = Ask(h5_, CcMad(method::kGet, attr::kClassPortInfo, 0));
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, class_port_info::kClassVersion), 2u);
}

// With a TrapLID set through the class's ClassPortInfo, a MAD refused for its CC_Key comes back
// as the Bad CC_Key trap (a Notice: Security, trap 0, the requester, method, attribute and the
// key it gave) to that LID's QP1; the setting stays and the violation is counted.
TEST_F(Cca, AWrongCcKeyBecomesABadCcKeyTrapToTheTrapLid) {
  uint16_t h1 = Dev("H1").port_mgmt(1).lid;
  MadBuffer cpi = CcMad(method::kSet, attr::kClassPortInfo, 0);
  Set(cpi.data() + kGsDataOffset, class_port_info::kTrapLid, h1);
  Set(cpi.data() + kGsDataOffset, class_port_info::kTrapQp, 1);
  Set(cpi.data() + kGsDataOffset, class_port_info::kTrapQKey, kQp1QKey);
  auto r = Ask(s1_, cpi);
  ASSERT_EQ(Status(r), 0u);
  EXPECT_EQ(Get(r->data() + kGsDataOffset, class_port_info::kTrapLid), h1);
  MadBuffer key = CcMad(method::kSet, attr::kCongestionKeyInfo, 0);
  Set(key.data() + kGsDataOffset, congestion_key_info::kCcKey, 0x42);
  Set(key.data() + kGsDataOffset, congestion_key_info::kCcKeyProtectBit, 1);
  ASSERT_EQ(Status(Ask(s1_, key)), 0u);

  MadBuffer bad = CcMad(method::kSet, attr::kSwitchCongestionSetting, 0, 0x7);
  Set(bad.data() + kGsDataOffset, switch_congestion_setting::kControlMap, 4);
  Set(bad.data() + kGsDataOffset, switch_congestion_setting::kThreshold, 9);
  r = Ask(s1_, bad);
  ASSERT_TRUE(r.has_value()) << "no trap came";
  const uint8_t* t = r->data();
  EXPECT_EQ(t[1], mgmt_class::kCongestion);
  EXPECT_EQ(t[3], method::kTrap);
  EXPECT_EQ(Get(t, hdr::kAttrId), attr::kNotice);
  EXPECT_EQ(Get(t, hdr::kCcKey), 0x42u);  // the CCA's own key, which its manager knows
  const uint8_t* n = t + kGsDataOffset;
  EXPECT_EQ(Get(n, notice::kIsGeneric), 1u);
  EXPECT_EQ(Get(n, notice::kType), notice::kTypeSecurity);
  EXPECT_EQ(Get(n, notice::kProducerType), node_info::kTypeSwitch);
  EXPECT_EQ(Get(n, notice::kTrapNumber), cc_notice::kTrapBadCcKey);
  EXPECT_EQ(Get(n, notice::kIssuerLid), s1_);
  EXPECT_EQ(Get(n, cc_notice::kSlid), h1);
  EXPECT_EQ(Get(n, cc_notice::kMethod), method::kSet);
  EXPECT_EQ(Get(n, cc_notice::kAttrId), attr::kSwitchCongestionSetting);
  EXPECT_EQ(Get(n, cc_notice::kQp), 1u);  // the test sends from H1's QP1
  EXPECT_EQ(Get(n, cc_notice::kCcKey), 0x7u);
  EXPECT_EQ(Dev("S1").cc_state(0).sw.threshold, 0) << "a refused Set changed the setting";
  EXPECT_EQ(Dev("S1").cc_state(0).key.violations, 1);
}

// The logs IB CC fills (docs/cc/ib.md) as a CongestionLog Get lays them out: the newest event
// first, the counter and the map; the Get clears events and map, the counter runs on.
TEST_F(Cca, CongestionLogsGiveTheNewestEventsFirstAndAGetClearsThem) {
  using namespace congestion_log;
  mgmt::CongestionLog& sl = Dev("S1").cc_state(0).log;
  for (int i = 0; i < 17; ++i) {  // two more than the switch log holds
    mgmt::CongestionEvent e;
    e.slid = static_cast<uint16_t>(100 + i);
    e.dlid = 7;
    e.sl = 3;
    e.timestamp = static_cast<uint32_t>(1000 + i);
    sl.Add(e, kSwitchEntries);
    sl.MarkBit(4);
  }
  auto r = Ask(s1_, CcMad(method::kGet, attr::kCongestionLog, 0));
  ASSERT_EQ(Status(r), 0u);
  const uint8_t* log = r->data() + kCcLogDataOffset;
  EXPECT_EQ(Get(log, kLogEventsCounter), 17u);
  EXPECT_EQ(log[kPortMap.byte + 31], 1u << 4);
  const uint8_t* first = log + kSwitchEntriesOffset;
  EXPECT_EQ(Get(first, kEntrySlid), 116u);  // the newest
  EXPECT_EQ(Get(first, kEntryDlid), 7u);
  EXPECT_EQ(Get(first, kEntrySl), 3u);
  EXPECT_EQ(Get(first, kEntryTimestamp), 1016u);
  EXPECT_EQ(Get(log + kSwitchEntriesOffset + 14 * kSwitchEntryBytes, kEntrySlid), 102u);
  r = Ask(s1_, CcMad(method::kGet, attr::kCongestionLog, 0));
  log = r->data() + kCcLogDataOffset;
  EXPECT_EQ(Get(log, kLogEventsCounter), 17u);
  EXPECT_EQ(Get(log + kSwitchEntriesOffset, kEntrySlid), 0u);
  EXPECT_EQ(log[kPortMap.byte + 31], 0u);

  mgmt::CongestionLog& cl = Dev("H5").cc_state(1).log;
  mgmt::CongestionEvent e;
  e.local_qp = 0x100;
  e.remote_qp = 0x101;
  e.sl = 2;
  e.local_lid = 7;
  e.remote_lid = 3;
  e.timestamp = 55;
  cl.Add(e, kCaEntries);
  cl.MarkBit(2);
  r = Ask(h5_, CcMad(method::kGet, attr::kCongestionLog, 0));
  log = r->data() + kCcLogDataOffset;
  EXPECT_EQ(Get(log, kThresholdEventCounter), 1u);
  EXPECT_EQ(Get(log, kThresholdCongestionEventMap), 1u << 2);
  const uint8_t* ce = log + kCaEntriesOffset;
  EXPECT_EQ(Get(ce, kCaEntryLocalQp), 0x100u);
  EXPECT_EQ(Get(ce, kCaEntryRemoteQp), 0x101u);
  EXPECT_EQ(Get(ce, kCaEntrySl), 2u);
  EXPECT_EQ(Get(ce, kCaEntryLocalLid), 7u);
  EXPECT_EQ(Get(ce, kCaEntryRemoteLid), 3u);
  EXPECT_EQ(Get(ce, kCaEntryTimestamp), 55u);
}

// The scenario's congestion_control section programs every CCA at the start, as OpenSM's cc_*
// options would: through the Control_Maps, per switch, per switch port and per CA.
TEST_F(Fabric, ScenarioCongestionControlSectionProgramsEveryCca) {
  BuildFrom("tests/data/scenarios/cc_settings.yaml");
  const mgmt::CcState& s1 = Dev("S1").cc_state(0);
  const mgmt::CcState& s2 = Dev("S2").cc_state(0);
  EXPECT_EQ(s1.sw.threshold, 7);  // its own
  EXPECT_EQ(s2.sw.threshold, 15);
  EXPECT_EQ(s2.sw.packet_size, 8);
  EXPECT_EQ(s2.sw.marking_rate, 1);
  EXPECT_EQ(s2.sw.control_map, 0x1Du);
  EXPECT_EQ(s2.sw.victim_mask[31], 0x06);
  EXPECT_EQ(s2.sw.credit_mask[31], 0x00) << "Control_Map bit 1 is clear";
  EXPECT_EQ(s2.sw.cs_return_delay, (1u << 14) | 100u);
  EXPECT_TRUE(s2.ports[2].valid);
  EXPECT_EQ(s2.ports[2].threshold, 12);
  EXPECT_EQ(s2.ports[2].marking_rate, 2);
  EXPECT_FALSE(s2.ports[3].valid);
  EXPECT_FALSE(s1.ports[2].valid);
  const mgmt::CcState& h1 = Dev("H1").cc_state(1);
  EXPECT_EQ(h1.ca.port_control, 1);
  EXPECT_EQ(h1.ca.sl[1].ccti_timer, 150);
  EXPECT_EQ(h1.ca.sl[2].ccti_timer, 0) << "SL 2 is not in Control_Map";
  EXPECT_EQ(h1.ccti_limit, 3);
  EXPECT_EQ(h1.cct[3], (1u << 14) | 3u);
  const mgmt::CcState& h5 = Dev("H5").cc_state(1);
  EXPECT_EQ(h5.ca.sl[0].ccti_timer, 20);
  EXPECT_EQ(h5.ca.sl[1].ccti_timer, 150);
  EXPECT_EQ(h5.ccti_limit, 1);
  EXPECT_EQ(h5.cct[1], 10u);
  // What a CC manager reads back over MADs is the same.
  MadBuffer b = CcMad(method::kGet, attr::kSwitchCongestionSetting, 0);
  Send("H1", 1, b, Dev("S1").port_mgmt(0).lid, 1);
  EXPECT_EQ(Get(Reply().data() + kGsDataOffset, switch_congestion_setting::kThreshold), 7u);
}

}  // namespace
}  // namespace ibemu
