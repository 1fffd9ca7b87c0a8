// Wire formats of common/wire: LRH and BTH bit positions (IBA vol. 1, 7.7 and 9.2), the
// flow-control packet (7.9.4), the opcodes (table 38) and the packet CRCs (7.8).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "common/capture/pcap_writer.h"
#include "common/wire/bth.h"
#include "common/wire/crc.h"
#include "common/wire/extension_headers.h"
#include "common/wire/flow_control_packet.h"
#include "common/wire/grh.h"
#include "common/wire/lrh.h"
#include "common/wire/opcode.h"

namespace ibemu::wire {
namespace {

using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------------
// Reference CRCs, written bit by bit from the published parameters (not table driven, so they
// share no code with crc.cc). Each is first checked against a catalogue check value.

// Reflects the low `width` bits of v.
uint32_t Reflect(uint32_t v, int width) {
  uint32_t r = 0;
  for (int i = 0; i < width; ++i)
    if (v >> i & 1) r |= 1u << (width - 1 - i);
  return r;
}

// A reflected-input, reflected-output CRC of `width` bits with all-ones init and xorout: the
// Ethernet family, to which both IB CRCs belong (IBA 7.8.1, 7.8.2).
uint32_t RefCrcReflected(int width, uint32_t poly, const uint8_t* data, size_t len) {
  const uint32_t mask = width == 32 ? 0xFFFFFFFFu : (1u << width) - 1;
  const uint32_t rpoly = Reflect(poly, width);
  uint32_t c = mask;
  for (size_t i = 0; i < len; ++i) {
    c ^= data[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ rpoly : c >> 1;
  }
  return ~c & mask;
}

uint32_t RefCrc32(const Bytes& b) {
  return RefCrcReflected(32, 0x04C11DB7u, b.data(), b.size());
}
uint16_t RefVcrc(const Bytes& b) {
  return static_cast<uint16_t>(RefCrcReflected(16, 0x100B, b.data(), b.size()));
}

Bytes Ascii(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

TEST(ReferenceCrc, MatchesCatalogueCheckValues) {
  // CRC-32 (ISO-HDLC / Ethernet) and CRC-16/X-25 check values from the CRC catalogue.
  EXPECT_EQ(RefCrc32(Ascii("123456789")), 0xCBF43926u);
  Bytes nine = Ascii("123456789");
  EXPECT_EQ(RefCrcReflected(16, 0x1021, nine.data(), nine.size()), 0x906Eu);
}

// ---------------------------------------------------------------------------------------------
// LRH

TEST(Lrh, EveryFieldLandsOnItsIbaBits) {
  std::array<uint8_t, kLrhBytes> b{};
  Lrh l{b.data()};
  l.set_vl(0xA);
  l.set_lver(0x5);
  l.set_sl(0xC);
  l.set_lnh(Lnh::kIbaLocal);
  l.set_dlid(0x1234);
  l.set_pkt_len(0x5A7);
  l.set_slid(0xBEEF);
  const std::array<uint8_t, kLrhBytes> want{0xA5, 0xC2, 0x12, 0x34, 0x05, 0xA7, 0xBE, 0xEF};
  EXPECT_EQ(b, want);
  EXPECT_EQ(l.vl(), 0xA);
  EXPECT_EQ(l.lver(), 0x5);
  EXPECT_EQ(l.sl(), 0xC);
  EXPECT_EQ(l.lnh(), Lnh::kIbaLocal);
  EXPECT_EQ(l.dlid(), 0x1234);
  EXPECT_EQ(l.pkt_len(), 0x5A7);
  EXPECT_EQ(l.slid(), 0xBEEF);
}

TEST(Lrh, MaximumFieldValuesFillExactlyTheirBits) {
  std::array<uint8_t, kLrhBytes> b{};
  Lrh l{b.data()};
  l.set_vl(15);
  l.set_sl(15);
  l.set_lnh(Lnh::kIbaGlobal);
  l.set_pkt_len(0x7FF);
  // Reserved bits (byte 1 [3:2], byte 4 [7:3]) stay zero.
  const std::array<uint8_t, kLrhBytes> want{0xF0, 0xF3, 0, 0, 0x07, 0xFF, 0, 0};
  EXPECT_EQ(b, want);
}

TEST(Lrh, OutOfRangeValuesAreTruncatedToTheFieldWidth) {
  std::array<uint8_t, kLrhBytes> b{};
  Lrh l{b.data()};
  l.set_vl(0x1B);
  l.set_pkt_len(0xF801);  // 11 bits: 0x001
  EXPECT_EQ(l.vl(), 0xB);
  EXPECT_EQ(l.lver(), 0);
  EXPECT_EQ(l.pkt_len(), 0x001);
  EXPECT_EQ(b[4], 0x00);  // the 5 reserved bits are not touched by the high bits of the value
}

// One settable field: the bytes/bits it owns and how to set and read it.
struct Field {
  std::string name;
  std::vector<uint8_t> mask;  // per header byte: the bits the field owns
  uint32_t max;
  std::function<void(uint8_t*, uint32_t)> set;
  std::function<uint32_t(uint8_t*)> get;
};

// For random starting bytes and random values, setting a field changes only its own bits and
// reads back (truncated to its width).
void CheckFieldsIsolated(const std::vector<Field>& fields, size_t bytes) {
  std::mt19937 rng(12345);
  for (const Field& f : fields) {
    ASSERT_EQ(f.mask.size(), bytes) << f.name;
    for (int trial = 0; trial < 200; ++trial) {
      Bytes before(bytes);
      for (auto& x : before) x = static_cast<uint8_t>(rng());
      uint32_t v = trial == 0 ? 0 : trial == 1 ? f.max : static_cast<uint32_t>(rng()) & f.max;
      Bytes after = before;
      f.set(after.data(), v);
      for (size_t i = 0; i < bytes; ++i)
        ASSERT_EQ((before[i] ^ after[i]) & ~f.mask[i] & 0xFF, 0)
            << f.name << " changed bits outside its field in byte " << i;
      ASSERT_EQ(f.get(after.data()), v) << f.name;
    }
  }
}

TEST(Lrh, SettingOneFieldLeavesEveryOtherBitUnchanged) {
  auto m = [](std::initializer_list<std::pair<int, uint8_t>> bits) {
    std::vector<uint8_t> v(kLrhBytes, 0);
    for (auto [i, x] : bits) v[i] = x;
    return v;
  };
  std::vector<Field> fields{
      {"VL", m({{0, 0xF0}}), 0xF, [](uint8_t* b, uint32_t v) { Lrh{b}.set_vl(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.vl()}; }},
      {"LVer", m({{0, 0x0F}}), 0xF, [](uint8_t* b, uint32_t v) { Lrh{b}.set_lver(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.lver()}; }},
      {"SL", m({{1, 0xF0}}), 0xF, [](uint8_t* b, uint32_t v) { Lrh{b}.set_sl(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.sl()}; }},
      {"LNH", m({{1, 0x03}}), 0x3,
       [](uint8_t* b, uint32_t v) { Lrh{b}.set_lnh(static_cast<Lnh>(v)); },
       [](uint8_t* b) { return static_cast<uint32_t>(Lrh{b}.lnh()); }},
      {"DLID", m({{2, 0xFF}, {3, 0xFF}}), 0xFFFF,
       [](uint8_t* b, uint32_t v) { Lrh{b}.set_dlid(uint16_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.dlid()}; }},
      {"PktLen", m({{4, 0x07}, {5, 0xFF}}), 0x7FF,
       [](uint8_t* b, uint32_t v) { Lrh{b}.set_pkt_len(uint16_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.pkt_len()}; }},
      {"SLID", m({{6, 0xFF}, {7, 0xFF}}), 0xFFFF,
       [](uint8_t* b, uint32_t v) { Lrh{b}.set_slid(uint16_t(v)); },
       [](uint8_t* b) { return uint32_t{Lrh{b}.slid()}; }},
  };
  CheckFieldsIsolated(fields, kLrhBytes);
}

// ---------------------------------------------------------------------------------------------
// BTH

TEST(Bth, EveryFieldLandsOnItsIbaBits) {
  std::array<uint8_t, kBthBytes> b{};
  Bth t{b.data()};
  t.set_opcode(opcode::kUdSendOnly);
  t.set_se(true);
  t.set_migreq(false);
  t.set_pad_cnt(3);
  t.set_tver(0);
  t.set_pkey(0xFFFF);
  t.set_fecn(true);
  t.set_becn(false);
  t.set_dest_qp(0xABCDEF);
  t.set_ack_req(true);
  t.set_psn(0x123456);
  const std::array<uint8_t, kBthBytes> want{0x64, 0xB0, 0xFF, 0xFF, 0x80, 0xAB,
                                            0xCD, 0xEF, 0x80, 0x12, 0x34, 0x56};
  EXPECT_EQ(b, want);

  std::array<uint8_t, kBthBytes> c{};
  Bth u{c.data()};
  u.set_opcode(opcode::kCnp);
  u.set_migreq(true);
  u.set_pad_cnt(1);
  u.set_tver(0xF);
  u.set_pkey(0x8001);
  u.set_becn(true);
  u.set_dest_qp(0x000001);
  u.set_psn(0xFFFFFF);
  const std::array<uint8_t, kBthBytes> want2{0x80, 0x5F, 0x80, 0x01, 0x40, 0x00,
                                             0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(c, want2);
  EXPECT_FALSE(u.se());
  EXPECT_TRUE(u.migreq());
  EXPECT_EQ(u.pad_cnt(), 1);
  EXPECT_EQ(u.tver(), 0xF);
  EXPECT_FALSE(u.fecn());
  EXPECT_TRUE(u.becn());
  EXPECT_FALSE(u.ack_req());
  EXPECT_EQ(u.psn(), 0xFFFFFFu);
}

TEST(Bth, TwentyFourBitFieldsDoNotSpillIntoTheirNeighbours) {
  std::array<uint8_t, kBthBytes> b{};
  b.fill(0x00);
  Bth t{b.data()};
  t.set_dest_qp(0xFF123456);  // byte 4 (FECN/BECN) must stay clear
  t.set_psn(0xFF654321);      // byte 8 (AckReq) must stay clear
  EXPECT_EQ(b[4], 0x00);
  EXPECT_EQ(b[8], 0x00);
  EXPECT_EQ(t.dest_qp(), 0x123456u);
  EXPECT_EQ(t.psn(), 0x654321u);
}

TEST(Bth, SettingOneFieldLeavesEveryOtherBitUnchanged) {
  auto m = [](std::initializer_list<std::pair<int, uint8_t>> bits) {
    std::vector<uint8_t> v(kBthBytes, 0);
    for (auto [i, x] : bits) v[i] = x;
    return v;
  };
  std::vector<Field> fields{
      {"OpCode", m({{0, 0xFF}}), 0xFF,
       [](uint8_t* b, uint32_t v) { Bth{b}.set_opcode(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Bth{b}.opcode()}; }},
      {"SE", m({{1, 0x80}}), 1, [](uint8_t* b, uint32_t v) { Bth{b}.set_se(v != 0); },
       [](uint8_t* b) { return uint32_t{Bth{b}.se()}; }},
      {"M", m({{1, 0x40}}), 1, [](uint8_t* b, uint32_t v) { Bth{b}.set_migreq(v != 0); },
       [](uint8_t* b) { return uint32_t{Bth{b}.migreq()}; }},
      {"PadCnt", m({{1, 0x30}}), 3, [](uint8_t* b, uint32_t v) { Bth{b}.set_pad_cnt(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Bth{b}.pad_cnt()}; }},
      {"TVer", m({{1, 0x0F}}), 0xF, [](uint8_t* b, uint32_t v) { Bth{b}.set_tver(uint8_t(v)); },
       [](uint8_t* b) { return uint32_t{Bth{b}.tver()}; }},
      {"P_Key", m({{2, 0xFF}, {3, 0xFF}}), 0xFFFF,
       [](uint8_t* b, uint32_t v) { Bth{b}.set_pkey(uint16_t(v)); },
       [](uint8_t* b) { return uint32_t{Bth{b}.pkey()}; }},
      {"FECN", m({{4, 0x80}}), 1, [](uint8_t* b, uint32_t v) { Bth{b}.set_fecn(v != 0); },
       [](uint8_t* b) { return uint32_t{Bth{b}.fecn()}; }},
      {"BECN", m({{4, 0x40}}), 1, [](uint8_t* b, uint32_t v) { Bth{b}.set_becn(v != 0); },
       [](uint8_t* b) { return uint32_t{Bth{b}.becn()}; }},
      {"DestQP", m({{5, 0xFF}, {6, 0xFF}, {7, 0xFF}}), 0xFFFFFF,
       [](uint8_t* b, uint32_t v) { Bth{b}.set_dest_qp(v); },
       [](uint8_t* b) { return Bth{b}.dest_qp(); }},
      {"AckReq", m({{8, 0x80}}), 1, [](uint8_t* b, uint32_t v) { Bth{b}.set_ack_req(v != 0); },
       [](uint8_t* b) { return uint32_t{Bth{b}.ack_req()}; }},
      {"PSN", m({{9, 0xFF}, {10, 0xFF}, {11, 0xFF}}), 0xFFFFFF,
       [](uint8_t* b, uint32_t v) { Bth{b}.set_psn(v); }, [](uint8_t* b) { return Bth{b}.psn(); }},
  };
  CheckFieldsIsolated(fields, kBthBytes);
}

// ---------------------------------------------------------------------------------------------
// Opcodes (IBA table 38: transport prefix in bits 7:5, operation in 4:0).

TEST(Opcode, ValuesMatchIbaTable38) {
  EXPECT_EQ(opcode::kRcSendFirst, 0x00);
  EXPECT_EQ(opcode::kRcSendMiddle, 0x01);
  EXPECT_EQ(opcode::kRcSendLast, 0x02);
  EXPECT_EQ(opcode::kRcSendOnly, 0x04);
  EXPECT_EQ(opcode::kRcRdmaWriteFirst, 0x06);
  EXPECT_EQ(opcode::kRcRdmaWriteMiddle, 0x07);
  EXPECT_EQ(opcode::kRcRdmaWriteLast, 0x08);
  EXPECT_EQ(opcode::kRcRdmaWriteOnly, 0x0A);
  EXPECT_EQ(opcode::kRcAcknowledge, 0x11);
  EXPECT_EQ(opcode::kUdSendOnly >> 5, 0x3);  // UD prefix 011
  EXPECT_EQ(opcode::kUdSendOnly & 0x1F, 0x04);
  EXPECT_EQ(opcode::kCnp, 0x80);  // prefix 100, annex A10
  EXPECT_EQ(opcode::kAethBytes, 4);
  EXPECT_EQ(opcode::kDethBytes, 8);
  EXPECT_EQ(opcode::kRethBytes, 16);
}

// ---------------------------------------------------------------------------------------------
// Flow-control packets

TEST(FlowControlPacket, FieldsLandOnTheirBits) {
  FlowControlPacket fc;
  fc.op = FcOp::kInit;
  fc.vl = 0xA;
  fc.fctbs = 0xABC;
  fc.fccl = 0x123;
  auto b = fc.Encode();
  EXPECT_EQ(b[0], 0x1A);
  EXPECT_EQ(b[1], 0xBC);
  EXPECT_EQ(b[2], 0xA1);
  EXPECT_EQ(b[3], 0x23);
  // The LPCRC is the IB CRC-16 over the first four bytes (IBA 7.9.4.3), whichever byte order.
  uint16_t crc = RefVcrc(Bytes(b.begin(), b.begin() + 4));
  uint16_t stored_be = static_cast<uint16_t>(b[4] << 8 | b[5]);
  uint16_t stored_le = static_cast<uint16_t>(b[5] << 8 | b[4]);
  EXPECT_TRUE(stored_be == crc || stored_le == crc) << std::hex << stored_be << " vs " << crc;
}

TEST(FlowControlPacket, EncodeDecodeRoundTripsEdgeValues) {
  const uint16_t counters[] = {0, 1, 0x7FF, 0x800, 0xFFE, 0xFFF};
  for (FcOp op : {FcOp::kNormal, FcOp::kInit})
    for (uint8_t vl = 0; vl < 16; ++vl)
      for (uint16_t fctbs : counters)
        for (uint16_t fccl : counters) {
          FlowControlPacket in;
          in.op = op;
          in.vl = vl;
          in.fctbs = fctbs;
          in.fccl = fccl;
          auto b = in.Encode();
          FlowControlPacket out;
          out.fctbs = 0x5A5;  // so a field Decode forgets to write shows up
          out.fccl = 0x5A5;
          out.vl = 7;
          ASSERT_TRUE(FlowControlPacket::Decode(b.data(), &out));
          EXPECT_EQ(out.op, op);
          EXPECT_EQ(out.vl, vl);
          EXPECT_EQ(out.fctbs, fctbs);
          EXPECT_EQ(out.fccl, fccl);
        }
}

TEST(FlowControlPacket, OversizedCountersAreMaskedNotSpilledIntoOpOrVl) {
  FlowControlPacket in;
  in.op = FcOp::kNormal;
  in.vl = 3;
  in.fctbs = 0xF123;
  in.fccl = 0xF456;
  auto b = in.Encode();
  FlowControlPacket out;
  ASSERT_TRUE(FlowControlPacket::Decode(b.data(), &out));
  EXPECT_EQ(out.op, FcOp::kNormal);
  EXPECT_EQ(out.vl, 3);
  EXPECT_EQ(out.fctbs, 0x123);
  EXPECT_EQ(out.fccl, 0x456);
}

TEST(FlowControlPacket, AnyCorruptedByteMakesDecodeFail) {
  // A 16-bit CRC detects every error burst of up to 16 bits, so every single-byte change.
  FlowControlPacket in;
  in.op = FcOp::kNormal;
  in.vl = 5;
  in.fctbs = 0x9C3;
  in.fccl = 0x1F0;
  const auto good = in.Encode();
  for (int i = 0; i < kFlowControlPacketBytes; ++i)
    for (int v = 0; v < 256; ++v) {
      if (v == good[i]) continue;
      auto bad = good;
      bad[i] = static_cast<uint8_t>(v);
      FlowControlPacket out;
      ASSERT_FALSE(FlowControlPacket::Decode(bad.data(), &out)) << "byte " << i << " = " << v;
    }
}

// ---------------------------------------------------------------------------------------------
// CRCs

// An RC SEND Only packet with LNH = IBA local: LRH, BTH, `payload` bytes of a pattern.
Bytes LocalPacket(size_t payload = 24) {
  Bytes p(kLrhBytes + kBthBytes + payload);
  Lrh l{p.data()};
  l.set_vl(2);
  l.set_sl(3);
  l.set_lnh(Lnh::kIbaLocal);
  l.set_dlid(0x0011);
  l.set_slid(0x0022);
  l.set_pkt_len(static_cast<uint16_t>((p.size() + 4) / 4));
  Bth t{p.data() + kLrhBytes};
  t.set_opcode(opcode::kRcSendOnly);
  t.set_pkey(0xFFFF);
  t.set_dest_qp(0x000123);
  t.set_ack_req(true);
  t.set_psn(0x000456);
  for (size_t i = 0; i < payload; ++i) p[kLrhBytes + kBthBytes + i] = static_cast<uint8_t>(i * 7);
  return p;
}

uint32_t Icrc(const Bytes& p) {
  return icrc(p.data(), p.size());
}

TEST(Crc16Ib, MatchesTheBitwiseDefinitionPolynomial100BSeedFFFF) {
  std::mt19937 rng(7);
  for (size_t len : {0, 1, 4, 5, 31, 64, 257}) {
    Bytes b(len);
    for (auto& x : b) x = static_cast<uint8_t>(rng());
    EXPECT_EQ(crc16_ib(b.data(), b.size()), RefVcrc(b)) << "len " << len;
  }
  EXPECT_EQ(crc16_ib(nullptr, 0), 0x0000);  // ~0xFFFF: nothing fed in
}

TEST(Icrc, IsTheEthernetCrc32OfThePacketWithVariantFieldsSetToOnes) {
  // IBA 7.8.1 (local packets): LRH VL and BTH resv8a (FECN, BECN, 6 reserved bits) are taken as
  // all ones; everything else from the LRH to the end of the payload is covered.
  Bytes p = LocalPacket();
  Bytes masked = p;
  masked[0] |= 0xF0;
  masked[kLrhBytes + 4] = 0xFF;
  EXPECT_EQ(Icrc(p), RefCrc32(masked));
}

TEST(Icrc, IsUnchangedWhenOnlyVlFecnOrBecnChange) {
  Bytes p = LocalPacket();
  const uint32_t base = Icrc(p);
  for (uint8_t vl = 0; vl < 16; ++vl) {
    Bytes q = p;
    Lrh{q.data()}.set_vl(vl);
    EXPECT_EQ(Icrc(q), base) << "VL " << int(vl);
  }
  for (int f = 0; f < 4; ++f) {
    Bytes q = p;
    Bth t{q.data() + kLrhBytes};
    t.set_fecn(f & 1);
    t.set_becn(f & 2);
    EXPECT_EQ(Icrc(q), base) << "FECN/BECN " << f;
  }
}

TEST(Icrc, ChangesWhenAnInvariantFieldChanges) {
  Bytes p = LocalPacket();
  const uint32_t base = Icrc(p);
  auto changed = [&](const std::function<void(Bytes&)>& edit) {
    Bytes q = p;
    edit(q);
    return Icrc(q) != base;
  };
  EXPECT_TRUE(changed([](Bytes& q) { Lrh{q.data()}.set_dlid(0x0012); }));
  EXPECT_TRUE(changed([](Bytes& q) { Lrh{q.data()}.set_slid(0x0023); }));
  EXPECT_TRUE(changed([](Bytes& q) { Lrh{q.data()}.set_sl(4); }));
  EXPECT_TRUE(changed([](Bytes& q) { Lrh{q.data()}.set_lver(1); }));
  EXPECT_TRUE(changed([](Bytes& q) { Bth{q.data() + kLrhBytes}.set_psn(0x457); }));
  EXPECT_TRUE(changed([](Bytes& q) { Bth{q.data() + kLrhBytes}.set_dest_qp(0x124); }));
  EXPECT_TRUE(changed([](Bytes& q) { q.back() ^= 0x01; }));
}

TEST(Icrc, VcrcCoversTheVariantFieldsTheIcrcSkips) {
  std::vector<uint8_t> a, b;
  Bytes p = LocalPacket(0);
  capture::SerializePacket(p.data(), p.size(), 24, 0, &a);
  Bytes q = p;
  Lrh{q.data()}.set_vl(7);
  Bth{q.data() + kLrhBytes}.set_fecn(true);
  capture::SerializePacket(q.data(), q.size(), 24, 0, &b);
  ASSERT_EQ(a.size(), b.size());
  const size_t n = a.size();
  // Same ICRC bytes, different VCRC.
  EXPECT_TRUE(std::equal(a.end() - 6, a.end() - 2, b.end() - 6));
  EXPECT_NE(Bytes(a.end() - 2, a.end()), Bytes(b.end() - 2, b.end()));
  EXPECT_EQ(n, p.size() + 24 + 4 + 2);
}

TEST(SerializePacket, LaysOutHeadersPayloadPadIcrcAndVcrc) {
  Bytes hdr = LocalPacket(0);
  std::vector<uint8_t> out;
  capture::SerializePacket(hdr.data(), hdr.size(), 5, 3, &out);
  ASSERT_EQ(out.size(), hdr.size() + 5 + 3 + 4 + 2);
  EXPECT_TRUE(std::equal(hdr.begin(), hdr.end(), out.begin()));
  for (size_t i = hdr.size(); i < hdr.size() + 8; ++i) EXPECT_EQ(out[i], 0) << i;
  const size_t body = hdr.size() + 8;
  uint32_t ic = icrc(out.data(), body);
  // ICRC least significant byte first, like Ethernet's FCS.
  EXPECT_EQ(out[body + 0], static_cast<uint8_t>(ic));
  EXPECT_EQ(out[body + 1], static_cast<uint8_t>(ic >> 8));
  EXPECT_EQ(out[body + 2], static_cast<uint8_t>(ic >> 16));
  EXPECT_EQ(out[body + 3], static_cast<uint8_t>(ic >> 24));
  uint16_t vc = crc16_ib(out.data(), body + 4);
  EXPECT_EQ(out[body + 4], static_cast<uint8_t>(vc));
  EXPECT_EQ(out[body + 5], static_cast<uint8_t>(vc >> 8));
}

TEST(SerializePacket, IcrcOnTheWireGivesTheCrc32ResidueAtTheReceiver) {
  // With the FCS appended least significant byte first, a receiver running the same CRC over
  // data and FCS gets the fixed CRC-32 residue: ~0xDEBB20E3 after the final inversion.
  for (size_t payload : {0, 4, 24, 256, 2048}) {
    Bytes hdr = LocalPacket(0);
    std::vector<uint8_t> out;
    capture::SerializePacket(hdr.data(), hdr.size(), static_cast<uint32_t>(payload), 0, &out);
    EXPECT_EQ(icrc(out.data(), out.size() - 2), ~0xDEBB20E3u) << payload;
  }
}

TEST(SerializePacket, VcrcOnTheWireGivesAConstantResidueAtTheReceiver) {
  // The reflected CRC-16 has a fixed residue too when its CRC is appended LSB first: the same
  // value for every packet.
  std::vector<uint16_t> residues;
  for (size_t payload : {0, 4, 24, 256, 2048}) {
    Bytes hdr = LocalPacket(0);
    Lrh{hdr.data()}.set_vl(static_cast<uint8_t>(payload % 16));
    std::vector<uint8_t> out;
    capture::SerializePacket(hdr.data(), hdr.size(), static_cast<uint32_t>(payload), 0, &out);
    residues.push_back(crc16_ib(out.data(), out.size()));
  }
  for (uint16_t r : residues) EXPECT_EQ(r, residues[0]);
}

// Global packets (LNH = 3, GRH present): the BTH starts at byte 48, and the variant fields the
// ICRC must skip are the whole LRH, GRH TClass/FlowLabel/HopLmt and BTH byte 4 (IBA 7.8.1).
TEST(Icrc, GlobalPacketIcrcIgnoresBthFecnAndGrhHopLimit) {
  Bytes p(8 + 40 + kBthBytes + 16, 0);
  Lrh l{p.data()};
  l.set_lnh(Lnh::kIbaGlobal);
  l.set_dlid(5);
  p[8] = 0x60;      // GRH IPVer 6
  p[8 + 6] = 0x1B;  // NxtHdr
  p[8 + 7] = 64;    // HopLmt
  Bth t{p.data() + 48};
  t.set_opcode(opcode::kRcSendOnly);
  t.set_psn(9);
  const uint32_t base = Icrc(p);
  Bytes q = p;
  Bth{q.data() + 48}.set_fecn(true);
  q[8 + 7] = 63;
  EXPECT_EQ(Icrc(q), base);
  Bytes r = p;
  r[8 + 4] = 0x01;  // PayLen is invariant
  EXPECT_NE(Icrc(r), base);
}

}  // namespace
}  // namespace ibemu::wire

namespace ibemu::wire {
namespace {

// IBA table 38, row by row for RC, and what the other transports have of it.
TEST(Opcode, TheTableOfExtensionHeadersAndPositions) {
  using namespace opcode;
  struct Row {
    uint8_t op;
    const char* headers;  // D R A K X I V: DETH RETH AtomicETH AETH AtomicAckETH ImmDt IETH
    bool payload;
    int ext_bytes;
  };
  const Row rc[] = {
      {0x00, "", true, 0},     {0x01, "", true, 0},    {0x02, "", true, 0},
      {0x03, "I", true, 4},    {0x04, "", true, 0},    {0x05, "I", true, 4},
      {0x06, "R", true, 16},   {0x07, "", true, 0},    {0x08, "", true, 0},
      {0x09, "I", true, 4},    {0x0A, "R", true, 16},  {0x0B, "RI", true, 20},
      {0x0C, "R", false, 16},  {0x0D, "K", true, 4},   {0x0E, "", true, 0},
      {0x0F, "K", true, 4},    {0x10, "K", true, 4},   {0x11, "K", false, 4},
      {0x12, "KX", false, 12}, {0x13, "A", false, 28}, {0x14, "A", false, 28},
      {0x16, "V", true, 4},    {0x17, "V", true, 4},
  };
  for (const Row& r : rc) {
    Info i = Describe(r.op);
    std::string h;
    if (i.deth) h += 'D';
    if (i.reth) h += 'R';
    if (i.atomic_eth) h += 'A';
    if (i.aeth) h += 'K';
    if (i.atomic_ack_eth) h += 'X';
    if (i.immdt) h += 'I';
    if (i.ieth) h += 'V';
    SCOPED_TRACE(static_cast<int>(r.op));
    EXPECT_EQ(i.transport, Transport::kRc);
    EXPECT_EQ(h, r.headers);
    EXPECT_EQ(i.payload, r.payload);
    EXPECT_EQ(i.ext_bytes(), r.ext_bytes);
    // UC has the SEND and WRITE rows (0x20..0x2B) and nothing else.
    Info uc = Describe(static_cast<uint8_t>(kUc | r.op));
    EXPECT_EQ(uc.valid(), r.op <= 0x0B);
    if (uc.valid()) {
      EXPECT_EQ(uc.ext_bytes(), r.ext_bytes);
    }
  }
  EXPECT_EQ(Describe(0x00).position, Position::kFirst);
  EXPECT_EQ(Describe(0x0E).position, Position::kMiddle);
  EXPECT_EQ(Describe(0x09).position, Position::kLast);
  EXPECT_EQ(Describe(0x10).position, Position::kOnly);
  EXPECT_FALSE(Describe(0x15).valid());  // reserved
  EXPECT_FALSE(Describe(0x18).valid());
  EXPECT_FALSE(Describe(0x40).valid());  // RD is not modelled
  // UD: SEND Only (DETH) and SEND Only with Immediate (DETH, ImmDt), nothing else.
  EXPECT_EQ(Describe(0x64).ext_bytes(), 8);
  EXPECT_EQ(Describe(0x65).ext_bytes(), 12);
  EXPECT_FALSE(Describe(0x60).valid());
  EXPECT_FALSE(Describe(0x6A).valid());
  EXPECT_EQ(Describe(kCnp).transport, Transport::kCnp);
}

TEST(ExtensionHeaders, FieldsAreBigEndianAtTheirOffsets) {
  std::array<uint8_t, 32> b{};
  Reth reth{b.data()};
  reth.set_va(0x0102030405060708ull);
  reth.set_rkey(0x090A0B0C);
  reth.set_dma_length(0x0D0E0F10);
  for (int k = 0; k < 16; ++k) EXPECT_EQ(b[k], k + 1) << k;
  EXPECT_EQ(reth.va(), 0x0102030405060708ull);
  EXPECT_EQ(reth.rkey(), 0x090A0B0Cu);
  EXPECT_EQ(reth.dma_length(), 0x0D0E0F10u);

  b.fill(0xFF);
  Deth deth{b.data()};
  deth.set_qkey(0x11111111);
  deth.set_src_qp(0x123456);
  EXPECT_EQ(b[4], 0);  // reserved byte cleared
  EXPECT_EQ(b[5], 0x12);
  EXPECT_EQ(b[7], 0x56);
  EXPECT_EQ(deth.src_qp(), 0x123456u);
  EXPECT_EQ(deth.qkey(), 0x11111111u);

  b.fill(0);
  AtomicEth a{b.data()};
  a.set_va(0x1000);
  a.set_rkey(7);
  a.set_swap_add(0xAAAAAAAAAAAAAAAAull);
  a.set_compare(0x5555555555555555ull);
  EXPECT_EQ(b[6], 0x10);
  EXPECT_EQ(b[11], 7);
  EXPECT_EQ(b[12], 0xAA);
  EXPECT_EQ(b[19], 0xAA);
  EXPECT_EQ(b[20], 0x55);
  EXPECT_EQ(b[27], 0x55);
  EXPECT_EQ(a.compare(), 0x5555555555555555ull);

  b.fill(0);
  Aeth k{b.data()};
  k.set_syndrome(aeth::RnrNak(14));
  k.set_msn(0xABCDEF);
  EXPECT_EQ(b[0], 0x2E);
  EXPECT_EQ(b[1], 0xAB);
  EXPECT_EQ(b[3], 0xEF);
  EXPECT_EQ(k.syndrome() & aeth::kKindMask, aeth::kRnrNak);
  EXPECT_EQ(aeth::Nak(aeth::kRemoteAccessError), 0x62);
  EXPECT_EQ(aeth::Ack(aeth::kCreditsInvalid), 0x1F);
}

}  // namespace
TEST(Grh, FieldsLandOnTheirIpv6Bits) {
  std::array<uint8_t, kGrhBytes> b{};
  Grh g{b.data()};
  g.set_ip_ver_tclass_flow(0xA5, 0xBCDEF);
  g.set_pay_len(0x1234);
  g.set_next_header(kGrhNextHeaderIba);
  g.set_hop_limit(0x40);
  std::array<uint8_t, 16> sgid, dgid;
  for (int i = 0; i < 16; ++i) {
    sgid[i] = static_cast<uint8_t>(i);
    dgid[i] = static_cast<uint8_t>(0xF0 + i);
  }
  g.set_sgid(sgid.data());
  g.set_dgid(dgid.data());
  // IPVer 6 | TClass 0xA5 | FlowLabel 0xBCDEF: 0110 1010 0101 1011 1100 ...
  EXPECT_EQ(b[0], 0x6A);
  EXPECT_EQ(b[1], 0x5B);
  EXPECT_EQ(b[2], 0xCD);
  EXPECT_EQ(b[3], 0xEF);
  EXPECT_EQ(b[4], 0x12);
  EXPECT_EQ(b[5], 0x34);
  EXPECT_EQ(b[6], 0x1B);
  EXPECT_EQ(b[7], 0x40);
  EXPECT_TRUE(std::equal(sgid.begin(), sgid.end(), b.begin() + 8));
  EXPECT_TRUE(std::equal(dgid.begin(), dgid.end(), b.begin() + 24));
  EXPECT_EQ(g.ip_ver(), 6);
  EXPECT_EQ(g.tclass(), 0xA5);
  EXPECT_EQ(g.flow_label(), 0xBCDEFu);
  EXPECT_EQ(g.pay_len(), 0x1234);
  EXPECT_EQ(g.next_header(), 0x1B);
  EXPECT_EQ(g.hop_limit(), 0x40);
  // A flow label wider than 20 bits does not reach the traffic class.
  g.set_ip_ver_tclass_flow(0, 0xFFFFFFFF);
  EXPECT_EQ(g.tclass(), 0);
  EXPECT_EQ(g.flow_label(), 0xFFFFFu);
}

}  // namespace ibemu::wire
