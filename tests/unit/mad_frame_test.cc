// A MAD frame (common/transport/mad_frame.h) shares its sockets with protobuf messages: a frame is
// told apart by its first byte, which no serialised ToFabric or FromFabric has, and anything that
// is not a whole frame of a known kind is refused rather than read past its end.
#include "common/transport/mad_frame.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/transport/mad_frame_proto.h"
#include "umad.pb.h"

namespace ibemu::transport {
namespace {

TEST(MadFrame, RoundTripKeepsTheHeaderAndTheMad) {
  MadFrameHeader h;
  h.kind = MadFrameKind::kReceive;
  h.handle = 0x01020304;
  h.addr.qpn = 0xABCDEF;
  h.addr.qkey = 0x80010000;
  h.addr.lid = 0xBEEF;
  h.addr.pkey_index = 3;
  h.addr.sl = 7;
  h.addr.grh_present = 1;
  h.addr.flow_label = 0x12345;
  h.addr.gid[15] = 0x42;
  std::vector<uint8_t> mad(256);
  for (size_t i = 0; i < mad.size(); ++i) mad[i] = static_cast<uint8_t>(i * 7);
  std::string bytes;
  EncodeMadFrame(h, mad.data(), mad.size(), &bytes);
  ASSERT_EQ(bytes.size(), 48u + 256u);
  ASSERT_TRUE(IsMadFrame(bytes.data(), bytes.size()));

  MadFrameHeader got;
  const uint8_t* p = nullptr;
  size_t len = 0;
  ASSERT_TRUE(DecodeMadFrame(bytes.data(), bytes.size(), &got, &p, &len));
  EXPECT_EQ(got.kind, MadFrameKind::kReceive);
  EXPECT_EQ(got.handle, 0x01020304u);
  EXPECT_EQ(got.addr.qpn, 0xABCDEFu);
  EXPECT_EQ(got.addr.qkey, 0x80010000u);
  EXPECT_EQ(got.addr.lid, 0xBEEF);
  EXPECT_EQ(got.addr.pkey_index, 3);
  EXPECT_EQ(got.addr.sl, 7);
  EXPECT_EQ(got.addr.flow_label, 0x12345u);
  EXPECT_EQ(got.addr.gid[15], 0x42);
  ASSERT_EQ(len, 256u);
  EXPECT_EQ(std::vector<uint8_t>(p, p + len), mad);

  // Through umad.proto's Address and back, for the ends that still speak protobuf.
  umad::Address a;
  ToProto(got.addr, &a);
  MadFrameAddress back = FromProto(a);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&back), sizeof back),
            std::string(reinterpret_cast<const char*>(&got.addr), sizeof got.addr));
}

TEST(MadFrame, ProtobufMessagesAreNeverTakenForFrames) {
  std::vector<std::string> messages;
  umad::ToFabric to;
  to.mutable_send()->set_handle(1);
  to.mutable_send()->set_mad(std::string(256, '\0'));
  messages.push_back(to.SerializeAsString());
  to.Clear();
  to.set_request(5);
  to.mutable_attach()->set_node("H1");
  messages.push_back(to.SerializeAsString());
  to.Clear();
  to.mutable_detach();  // an empty body: the body's tag alone
  messages.push_back(to.SerializeAsString());
  umad::FromFabric from;
  from.mutable_receive()->set_mad(std::string(256, '\0'));
  messages.push_back(from.SerializeAsString());
  from.Clear();
  from.mutable_completions();
  messages.push_back(from.SerializeAsString());
  for (const std::string& m : messages) {
    ASSERT_FALSE(m.empty());
    EXPECT_FALSE(IsMadFrame(m.data(), m.size())) << "first byte " << int{m[0]};
  }
  // The empty message (every field at its default) is no frame either.
  EXPECT_FALSE(IsMadFrame("", 0));
}

TEST(MadFrame, WhatIsNotAWholeFrameOfAKnownKindIsRefused) {
  MadFrameHeader h;
  h.kind = MadFrameKind::kSend;
  std::string mad(256, 'x');
  std::string good;
  EncodeMadFrame(h, mad.data(), mad.size(), &good);
  MadFrameHeader got;
  const uint8_t* p;
  size_t len;
  ASSERT_TRUE(DecodeMadFrame(good.data(), good.size(), &got, &p, &len));

  // The header alone (no MAD) and less than the header.
  EXPECT_FALSE(DecodeMadFrame(good.data(), sizeof(MadFrameHeader), &got, &p, &len));
  EXPECT_FALSE(DecodeMadFrame(good.data(), 10, &got, &p, &len));
  // A MAD longer than a frame carries.
  std::string big;
  std::string huge(kMadFrameMaxMad + 1, 'y');
  EncodeMadFrame(h, huge.data(), huge.size(), &big);
  EXPECT_FALSE(DecodeMadFrame(big.data(), big.size(), &got, &p, &len));
  // Kinds 0 and 3.
  for (uint8_t kind : {0, 3}) {
    std::string bad = good;
    bad[1] = static_cast<char>(kind);
    EXPECT_FALSE(DecodeMadFrame(bad.data(), bad.size(), &got, &p, &len)) << int{kind};
  }
  // A Send where a Receive is wanted (what a library takes from the fabric), and the reverse.
  EXPECT_TRUE(DecodeMadFrame(good.data(), good.size(), MadFrameKind::kSend, &got, &p, &len));
  EXPECT_FALSE(DecodeMadFrame(good.data(), good.size(), MadFrameKind::kReceive, &got, &p, &len));
  std::string received = good;
  received[1] = static_cast<char>(MadFrameKind::kReceive);
  EXPECT_TRUE(
      DecodeMadFrame(received.data(), received.size(), MadFrameKind::kReceive, &got, &p, &len));
  EXPECT_FALSE(
      DecodeMadFrame(received.data(), received.size(), MadFrameKind::kSend, &got, &p, &len));
}

}  // namespace
}  // namespace ibemu::transport
