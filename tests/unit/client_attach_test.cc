// The fabric's side of the host-library protocol (emulator/fabric/umad_service.cc), over real
// ZeroMQ sockets: what an Attach may name, and that nothing a client sends reaches a port the
// node does not have. Found by the umad_client fuzzer: a port number of 2^31 or more passed the
// range check as a negative int, and a later SetIsSm wrote outside the node's port table.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/mad/mad_header.h"
#include "common/mad/smp_attributes.h"
#include "common/transport/mad_frame_proto.h"
#include "emulator/fabric/umad_service.h"
#include "tests/fuzz/fuzz_fabric.h"
#include "umad.pb.h"

namespace ibemu {
namespace {

class ClientAttach : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = std::make_unique<fabric::UmadService>(ctx_, "inproc://client-attach", "", *w_.f,
                                                     w_.s, *w_.part);
    w_.Start();
    client_.set(zmq::sockopt::routing_id, "client");
    client_.set(zmq::sockopt::linger, 0);
    client_.connect("inproc://client-attach");
  }

  void Send(const umad::ToFabric& m) {
    std::string b = m.SerializeAsString();
    client_.send(zmq::buffer(b), zmq::send_flags::none);
    service_->Poll();
  }
  umad::FromFabric Reply() {
    zmq::message_t m;
    EXPECT_TRUE(client_.recv(m, zmq::recv_flags::dontwait));
    umad::FromFabric r;
    EXPECT_TRUE(r.ParseFromArray(m.data(), static_cast<int>(m.size())));
    return r;
  }
  umad::Attached Attach(const std::string& node, uint32_t port, uint32_t handle) {
    umad::ToFabric m;
    m.set_request(handle);
    m.mutable_attach()->set_node(node);
    m.mutable_attach()->set_port(port);
    m.mutable_attach()->set_handle(handle);
    Send(m);
    return Reply().attached();
  }
  uint32_t CapMask(const std::string& node, int port) {
    return w_.f->devices[w_.s.topo.FindNode(node)]->port_mgmt(port).capability_mask;
  }

  fuzzing::FuzzFabric w_;  // the test bed waiting for an external SM, as the fuzzer drives it
  zmq::context_t ctx_;
  std::unique_ptr<fabric::UmadService> service_;
  zmq::socket_t client_{ctx_, zmq::socket_type::dealer};
};

TEST_F(ClientAttach, PortNumbersOutsideTheNodeAreRefusedEvenWhenTheyLookNegative) {
  for (uint32_t port : {0u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu}) {
    umad::Attached a = Attach("H1", port, 7);
    EXPECT_FALSE(a.ok()) << "port " << port;
    EXPECT_EQ(a.error(), "node 'H1' has no port " + std::to_string(port) + " (ports 1..1)");
  }
  EXPECT_EQ(service_->attached_clients(), 0u);
  // An IsSM for the refused handle changes no port.
  uint32_t before = CapMask("H1", 1);
  umad::ToFabric issm;
  issm.mutable_issm()->set_handle(7);
  issm.mutable_issm()->set_is_sm(true);
  Send(issm);
  EXPECT_EQ(CapMask("H1", 1), before);
}

TEST_F(ClientAttach, TheNodesPortIsAttachedAndIsSmSetsItsCapabilityBit) {
  umad::Attached a = Attach("H1", 1, 3);
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_EQ(a.handle(), 3u);
  EXPECT_EQ(service_->attached_clients(), 1u);
  umad::ToFabric issm;
  issm.mutable_issm()->set_handle(3);
  issm.mutable_issm()->set_is_sm(true);
  Send(issm);
  EXPECT_NE(CapMask("H1", 1) & mad::port_info::kCapIsSm, 0u);
  issm.mutable_issm()->set_is_sm(false);
  Send(issm);
  EXPECT_EQ(CapMask("H1", 1) & mad::port_info::kCapIsSm, 0u);
}

// A MAD that reaches a program carries, in its address, the index of the port's P_Key table
// entry its P_Key names, as the kernel reports it in umad's pkey_index. Here a PerfMgt Get goes to
// the program's own port by LID, and the PMA's answer comes back to the program with the request's
// P_Key.
TEST_F(ClientAttach, AReceivedMadNamesTheIndexOfItsPKeyInThePortsTable) {
  const int h1 = w_.s.topo.FindNode("H1");
  mgmt::PortMgmt& pm = w_.f->devices[h1]->port_mgmt(1);
  pm.lid = 5;
  // 0x0001 is a limited member of 0x8001's partition, ahead of the full member: the full one
  // is named, as the kernel's ib_find_cached_pkey does.
  pm.pkeys = {0xFFFF, 0x0001, 0x0002, 0x8001};
  ASSERT_TRUE(Attach("H1", 1, 4).ok());
  for (uint32_t index : {3u, 0u}) {
    umad::ToFabric m;
    umad::Send* sd = m.mutable_send();
    sd->set_handle(4);
    engine::MadBytes mad{};
    mad::Set(mad.data(), mad::hdr::kBaseVersion, 1);
    mad::Set(mad.data(), mad::hdr::kMgmtClass, mad::mgmt_class::kPerf);
    mad::Set(mad.data(), mad::hdr::kClassVersion, 1);
    mad::Set(mad.data(), mad::hdr::kMethod, mad::method::kGet);
    mad::Set(mad.data(), mad::hdr::kTid, index + 1);
    mad::Set(mad.data(), mad::hdr::kAttrId, mad::attr::kClassPortInfo);
    sd->set_mad(mad.data(), mad.size());
    sd->mutable_addr()->set_lid(5);
    sd->mutable_addr()->set_qpn(1);
    sd->mutable_addr()->set_qkey(mad::kQp1QKey);
    sd->mutable_addr()->set_pkey_index(index);
    Send(m);
    w_.part->RunUntil(w_.part->now() + 100 * link::kPsPerUs);
    umad::FromFabric r = Reply();
    ASSERT_TRUE(r.has_receive());
    EXPECT_EQ(static_cast<uint8_t>(r.receive().mad()[3]), mad::method::kGetResp);
    EXPECT_EQ(r.receive().addr().pkey_index(), index);
    EXPECT_EQ(r.receive().addr().lid(), 5u);
  }
}

// A program whose library asked for frames at Attach gets its MADs as frames, one from before
// them gets Receive messages, and both see the same address: here both are attached to H1's port,
// the first sends a PerfMgt Get (to its port's LID, P_Key index 3) and an SMP Get NodeInfo (LID
// routed) as frames, and each answer reaches both programs, each in its own form.
TEST_F(ClientAttach, MadsGoAsFramesToTheProgramsThatAskedAndAsReceivesToTheOthers) {
  const int h1 = w_.s.topo.FindNode("H1");
  mgmt::PortMgmt& pm = w_.f->devices[h1]->port_mgmt(1);
  pm.lid = 5;
  pm.pkeys = {0xFFFF, 0x0001, 0x0002, 0x8001};
  umad::ToFabric m;
  m.set_request(4);
  m.mutable_attach()->set_node("H1");
  m.mutable_attach()->set_port(1);
  m.mutable_attach()->set_handle(4);
  m.mutable_attach()->set_mad_frames(true);
  Send(m);
  umad::Attached a = Reply().attached();
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a.mad_frames());
  zmq::socket_t old{ctx_, zmq::socket_type::dealer};  // a library from before frames
  old.set(zmq::sockopt::routing_id, "old");
  old.set(zmq::sockopt::linger, 0);
  old.connect("inproc://client-attach");
  m.mutable_attach()->set_handle(9);
  m.mutable_attach()->set_mad_frames(false);
  std::string b = m.SerializeAsString();
  old.send(zmq::buffer(b), zmq::send_flags::none);
  service_->Poll();
  zmq::message_t reply;
  ASSERT_TRUE(old.recv(reply, zmq::recv_flags::dontwait));

  struct Case {
    uint8_t mgmt_class;
    uint16_t attr;
    uint32_t qpn;
    uint16_t pkey_index;  // sent
    uint16_t answered_index;
  };
  for (const Case& c : {Case{mad::mgmt_class::kPerf, mad::attr::kClassPortInfo, 1, 3, 3},
                        Case{mad::mgmt_class::kSubnLid, mad::attr::kNodeInfo, 0, 0, 0}}) {
    SCOPED_TRACE(c.qpn == 0 ? "SMP" : "GMP");
    engine::MadBytes mad{};
    mad::Set(mad.data(), mad::hdr::kBaseVersion, 1);
    mad::Set(mad.data(), mad::hdr::kMgmtClass, c.mgmt_class);
    mad::Set(mad.data(), mad::hdr::kClassVersion, 1);
    mad::Set(mad.data(), mad::hdr::kMethod, mad::method::kGet);
    mad::Set(mad.data(), mad::hdr::kTid, 0x42);
    mad::Set(mad.data(), mad::hdr::kAttrId, c.attr);
    transport::MadFrameHeader h;
    h.kind = transport::MadFrameKind::kSend;
    h.handle = 4;
    h.addr.lid = 5;
    h.addr.qpn = c.qpn;
    h.addr.qkey = c.qpn == 0 ? 0 : mad::kQp1QKey;
    h.addr.pkey_index = c.pkey_index;
    std::string frame;
    transport::EncodeMadFrame(h, mad.data(), mad.size(), &frame);
    client_.send(zmq::buffer(frame), zmq::send_flags::none);
    service_->Poll();
    w_.part->RunUntil(w_.part->now() + 100 * link::kPsPerUs);

    zmq::message_t got;
    ASSERT_TRUE(client_.recv(got, zmq::recv_flags::dontwait));
    transport::MadFrameHeader rh;
    const uint8_t* rmad;
    size_t rlen;
    ASSERT_TRUE(transport::DecodeMadFrame(got.data(), got.size(), &rh, &rmad, &rlen));
    EXPECT_EQ(rh.kind, transport::MadFrameKind::kReceive);
    EXPECT_EQ(rh.handle, 4u);
    ASSERT_EQ(rlen, engine::kMadBytes);
    EXPECT_EQ(rmad[3], mad::method::kGetResp);
    EXPECT_EQ(rh.addr.lid, 5);
    EXPECT_EQ(rh.addr.qpn, c.qpn);
    EXPECT_EQ(rh.addr.pkey_index, c.answered_index);

    // Copied before `got` is reused for the protobuf client's message.
    const std::string framed_mad(reinterpret_cast<const char*>(rmad), rlen);

    ASSERT_TRUE(old.recv(got, zmq::recv_flags::dontwait));
    umad::FromFabric r;
    ASSERT_TRUE(r.ParseFromArray(got.data(), static_cast<int>(got.size())));
    ASSERT_TRUE(r.has_receive());
    EXPECT_EQ(r.receive().handle(), 9u);
    EXPECT_EQ(r.receive().mad(), framed_mad);
    EXPECT_EQ(r.receive().addr().lid(), 5u);
    EXPECT_EQ(r.receive().addr().qpn(), c.qpn);
    EXPECT_EQ(r.receive().addr().pkey_index(), c.answered_index);
  }
}

}  // namespace
}  // namespace ibemu
