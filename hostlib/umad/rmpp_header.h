// The RMPP header (IBA vol. 1, 13.6.2.1) at MAD bytes 24..35, and the class facts RMPP depends
// on: which classes may use it and where each class's data starts (the part of a MAD every
// segment repeats). Values and names follow the Linux kernel's ib_mad (rdma/ib_mad.h,
// ib_get_mad_data_offset, ib_is_mad_class_rmpp), which the user MAD ABI was written against.
#pragma once
#include <infiniband/umad.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/mad/mad_header.h"

namespace ibemu::umad {

// The ib_user_mad header a umad record (what umad_send takes, umad_recv fills) starts with.
inline ib_user_mad HeaderOf(const std::vector<uint8_t>& umad) {
  ib_user_mad hdr;
  std::memcpy(&hdr, umad.data(), sizeof hdr);
  return hdr;
}

// The common header and the RMPP header (IBA 13.6.2.1): what every RMPP segment starts with.
constexpr size_t kRmppHeaderEnd = 36;

constexpr uint8_t kRmppVersion = 1;

enum RmppType : uint8_t { kRmppData = 1, kRmppAck = 2, kRmppStop = 3, kRmppAbort = 4 };

// RMPPFlags, the low three bits of byte 26; RRespTime is the high five.
constexpr uint8_t kRmppActive = 0x01;
constexpr uint8_t kRmppFirst = 0x02;
constexpr uint8_t kRmppLast = 0x04;

// RMPPStatus (IBA table 176): STOP carries kRmppResx, ABORT one of 118..127.
namespace rmpp_status {
constexpr uint8_t kResx = 1;         // resources exhausted
constexpr uint8_t kT2L = 118;        // total time too long
constexpr uint8_t kBadSeg = 120;     // first segment flags inconsistent
constexpr uint8_t kBadType = 121;    // illegal RMPP type
constexpr uint8_t kW2S = 122;        // NewWindowLast too small
constexpr uint8_t kS2B = 123;        // segment number too big
constexpr uint8_t kBadStatus = 124;  // illegal status
constexpr uint8_t kUnv = 125;        // unsupported version
constexpr uint8_t kAbortMin = 118;
constexpr uint8_t kAbortMax = 127;
}  // namespace rmpp_status

// What PayloadLength counts per segment: everything after the RMPP header (IB_MGMT_RMPP_DATA).
constexpr uint32_t kRmppSegmentPayload = mad::kMadBytes - kRmppHeaderEnd;  // 220

// ib_is_mad_class_rmpp(): SA, device management, device administration, BIS, vendor range 2.
inline bool IsRmppClass(uint8_t mgmt_class) {
  return mgmt_class == 0x03 || mgmt_class == 0x06 || mgmt_class == 0x10 || mgmt_class == 0x12 ||
         mad::IsVendorRange2(mgmt_class);
}

// ib_get_mad_data_offset(): where the class's data starts. Each RMPP segment repeats the bytes
// before it (common header, RMPP header, class header) and carries kMadBytes minus this many
// bytes of the message's data.
inline size_t MadDataOffset(uint8_t mgmt_class) {
  if (mgmt_class == 0x03) return 56;                                              // SA header
  if (mgmt_class == 0x06 || mgmt_class == 0x10 || mgmt_class == 0x12) return 64;  // device
  if (mad::IsVendorRange2(mgmt_class)) return 40;                                 // vendor + OUI
  return mad::kMadHeaderBytes;
}

struct RmppHeader {
  uint8_t version = 0;
  uint8_t type = 0;
  uint8_t resp_time = 0;  // RRespTime, 5 bits
  uint8_t flags = 0;      // kRmppActive | kRmppFirst | kRmppLast
  uint8_t status = 0;
  uint32_t seg_num = 0;        // Data1: SegmentNumber
  uint32_t paylen_newwin = 0;  // Data2: PayloadLength (DATA) or NewWindowLast (ACK)

  // `mad` has at least kRmppHeaderEnd bytes.
  static RmppHeader Read(const uint8_t* mad);
  void Write(uint8_t* mad) const;

  bool active() const { return (flags & kRmppActive) != 0; }
  bool first() const { return (flags & kRmppFirst) != 0; }
  bool last() const { return (flags & kRmppLast) != 0; }
};

inline RmppHeader RmppHeader::Read(const uint8_t* mad) {
  auto be32 = [](const uint8_t* p) {
    return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
  };
  RmppHeader h;
  h.version = mad[24];
  h.type = mad[25];
  h.resp_time = static_cast<uint8_t>(mad[26] >> 3);
  h.flags = static_cast<uint8_t>(mad[26] & 0x07);
  h.status = mad[27];
  h.seg_num = be32(mad + 28);
  h.paylen_newwin = be32(mad + 32);
  return h;
}

inline void RmppHeader::Write(uint8_t* mad) const {
  auto put32 = [](uint8_t* p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
  };
  mad[24] = version;
  mad[25] = type;
  mad[26] = static_cast<uint8_t>(resp_time << 3 | (flags & 0x07));
  mad[27] = status;
  put32(mad + 28, seg_num);
  put32(mad + 32, paylen_newwin);
}

// MADs for the wire as the RMPP layer hands them to the host: each a struct ib_user_mad (the
// address) followed by one 256-byte MAD.
using WireMads = std::vector<std::vector<uint8_t>>;

// An RMPP control MAD (ACK, STOP, ABORT) answering `mad`: its bytes up to the class data with the
// R bit of the method flipped and `reply` as RMPP header (RRespTime kept from `mad`), zero-padded
// to one MAD, preceded by a struct ib_user_mad addressed to `to` (QP1's Q_Key). Both the
// receiver's ACKs and the ABORTs sent on protocol errors take this form (the kernel's
// format_ack, nack_recv).
std::vector<uint8_t> RmppReply(const uint8_t* mad, const ib_mad_addr_t& to, RmppHeader reply);

}  // namespace ibemu::umad
