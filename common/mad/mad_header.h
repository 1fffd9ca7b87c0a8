// The 256-byte MAD: the common header every management class shares (IBA 13.4.3), the SMP and
// directed-route SMP layouts (14.2.1), the GS layouts of PerfMgt (16.1) and Congestion Control
// (annex A10), and the numbers that go in them. Offsets here are from MAD byte 0; attribute
// layouts (smp_attributes.h, ...) are from the attribute data.
#pragma once
#include <array>
#include <cstdint>
#include <type_traits>

#include "common/mad/field.h"

namespace ibemu::mad {

constexpr int kMadBytes = 256;       // one MAD; longer messages need RMPP (IBA 13.6)
constexpr int kMadHeaderBytes = 24;  // the common header (IBA 13.4.3)
using MadBuffer = std::array<uint8_t, kMadBytes>;

namespace mgmt_class {
constexpr uint8_t kSubnLid = 0x01;  // LID-routed SMP
constexpr uint8_t kSubnAdm = 0x03;  // SA
constexpr uint8_t kPerf = 0x04;
constexpr uint8_t kSubnDirected = 0x81;
constexpr uint8_t kCongestion = 0x21;
// Vendor range 2 (IBA 13.4.4): classes told apart by the OUI in their header, not by number.
constexpr uint8_t kVendorRange2First = 0x30;
constexpr uint8_t kVendorRange2Last = 0x4F;
}  // namespace mgmt_class

inline bool IsVendorRange2(uint8_t c) {
  return c >= mgmt_class::kVendorRange2First && c <= mgmt_class::kVendorRange2Last;
}

// Subnet management classes go to QP0, every other class to QP1 (IBA 13.5.1).
inline uint8_t QpnForClass(uint8_t c) {
  return (c == mgmt_class::kSubnLid || c == mgmt_class::kSubnDirected) ? 0 : 1;
}

namespace method {
constexpr uint8_t kGet = 0x01;
constexpr uint8_t kSet = 0x02;
constexpr uint8_t kSend = 0x03;
constexpr uint8_t kTrap = 0x05;
constexpr uint8_t kReport = 0x06;
constexpr uint8_t kTrapRepress = 0x07;
constexpr uint8_t kGetTable = 0x12;
constexpr uint8_t kResponse = 0x80;  // the R bit
constexpr uint8_t kGetResp = 0x81;
constexpr uint8_t kReportResp = 0x86;
}  // namespace method

// MAD status, common bits (IBA 13.4.7): a 3-bit code in bits 4:2.
namespace status {
constexpr uint16_t kOk = 0;
constexpr uint16_t kBusy = 0x0001;
constexpr uint16_t kBadVersion = 0x0004;     // base or class version not supported
constexpr uint16_t kBadMethod = 0x0008;      // method not supported
constexpr uint16_t kBadMethodAttr = 0x000C;  // method/attribute combination not supported
constexpr uint16_t kBadAttrValue = 0x001C;   // attribute or modifier value invalid
constexpr uint16_t kDirectionBit = 0x8000;   // DR SMP: D bit shares the status word
}  // namespace status

// Attribute IDs.
namespace attr {
constexpr uint16_t kClassPortInfo = 0x0001;
constexpr uint16_t kNotice = 0x0002;
constexpr uint16_t kNodeDescription = 0x0010;
constexpr uint16_t kNodeInfo = 0x0011;
constexpr uint16_t kSwitchInfo = 0x0012;
constexpr uint16_t kGuidInfo = 0x0014;
constexpr uint16_t kPortInfo = 0x0015;
constexpr uint16_t kPKeyTable = 0x0016;
constexpr uint16_t kSl2VlTable = 0x0017;
constexpr uint16_t kVlArbTable = 0x0018;
constexpr uint16_t kLinearForwardingTable = 0x0019;
constexpr uint16_t kMulticastForwardingTable = 0x001B;
constexpr uint16_t kSmInfo = 0x0020;
// Vendor (Mellanox) PortInfo extension: libibnetdisc asks for it on Mellanox device IDs.
constexpr uint16_t kMlnxExtPortInfo = 0xFF90;
// PerfMgt
constexpr uint16_t kPortCounters = 0x0012;
constexpr uint16_t kPortCountersExtended = 0x001D;
constexpr uint16_t kPortXmitDataSl = 0x0036;
constexpr uint16_t kPortRcvDataSl = 0x0037;
// Congestion Control
constexpr uint16_t kCongestionInfo = 0x0011;
constexpr uint16_t kCongestionKeyInfo = 0x0012;
constexpr uint16_t kCongestionLog = 0x0013;
constexpr uint16_t kSwitchCongestionSetting = 0x0014;
constexpr uint16_t kSwitchPortCongestionSetting = 0x0015;
constexpr uint16_t kCaCongestionSetting = 0x0016;
constexpr uint16_t kCongestionControlTable = 0x0017;
constexpr uint16_t kTimestamp = 0x0018;
}  // namespace attr

// Where each class's attribute data starts, and how long it is.
constexpr int kSmpDataOffset = 64;
constexpr int kSmpDataBytes = 64;
constexpr int kGsDataOffset = 64;  // PerfMgt and CC MgtData
constexpr int kGsDataBytes = 192;
constexpr int kCcLogDataOffset = 32;  // CongestionLog uses LogData and MgtData as one area
constexpr int kCcLogDataBytes = 224;
constexpr int kDrPathBytes = 64;
constexpr int kMaxDrHops = 63;

constexpr uint16_t kPermissiveLid = 0xFFFF;
constexpr uint32_t kQp1QKey = 0x80010000;

namespace hdr {
inline constexpr Field kBaseVersion{"MadBaseVersion", 0, 0, 8};
inline constexpr Field kMgmtClass{"MadMgmtClass", 1, 0, 8, Format::kHex};
inline constexpr Field kClassVersion{"MadClassVersion", 2, 0, 8};
inline constexpr Field kIsResponse{"MadIsResponse", 3, 0, 1};
inline constexpr Field kMethod{"MadMethod", 3, 1, 7, Format::kHex};
inline constexpr Field kStatus{"MadStatus", 4, 0, 16, Format::kHex};
inline constexpr Field kTid{"MadTRID", 8, 0, 64, Format::kHex};
inline constexpr Field kAttrId{"MadAttr", 16, 0, 16, Format::kHex};
inline constexpr Field kAttrMod{"MadModifier", 20, 0, 32, Format::kHex};
// SMP
inline constexpr Field kMKey{"MadMkey", 24, 0, 64, Format::kHex};
// Directed-route SMP
inline constexpr Field kDrDirection{"DrSmpDirection", 4, 0, 1};
inline constexpr Field kDrStatus{"DrSmpStatus", 4, 1, 15, Format::kHex};
inline constexpr Field kDrHopPtr{"DrSmpHopPtr", 6, 0, 8};
inline constexpr Field kDrHopCnt{"DrSmpHopCnt", 7, 0, 8};
inline constexpr Field kDrSlid{"DrSmpSLID", 32, 0, 16};
inline constexpr Field kDrDlid{"DrSmpDLID", 34, 0, 16};
inline constexpr Field kDrInitialPath{"DrSmpPath", 128, 0, 512, Format::kBytes};
inline constexpr Field kDrReturnPath{"DrSmpRetPath", 192, 0, 512, Format::kBytes};
// Congestion Control
inline constexpr Field kCcKey{"CC_Key", 24, 0, 64, Format::kHex};
// Vendor range 2: the OUI follows the RMPP header and one reserved byte (IBA 13.4.3.2).
inline constexpr Field kVendorOui{"OUI", 37, 0, 24, Format::kHex};

inline constexpr const Field* kCommon[] = {&kBaseVersion, &kMgmtClass, &kClassVersion,
                                           &kIsResponse,  &kMethod,    &kStatus,
                                           &kTid,         &kAttrId,    &kAttrMod};
}  // namespace hdr

// A view of a MAD in place; every accessor goes through the field descriptions above, so the
// byte order is the wire's (big-endian) whoever holds the view. Byte is uint8_t for a view that
// may rewrite the MAD (the emulator's agents answer in the buffer the request came in) and
// const uint8_t for one that only reads it (the host library routes MADs the application owns);
// the setters exist only on the first. The caller guarantees the bytes an accessor reaches: the
// common header (kMadHeaderBytes) for the common fields, a whole MAD for the rest.
template <typename Byte>
struct BasicMadView {
  static constexpr bool kWritable = !std::is_const_v<Byte>;
  Byte* b;

  uint8_t base_version() const { return static_cast<uint8_t>(Get(b, hdr::kBaseVersion)); }
  uint8_t mgmt_class() const { return b[1]; }
  uint8_t class_version() const { return b[2]; }
  uint8_t method() const { return b[3]; }  // with the R bit
  uint16_t status() const { return static_cast<uint16_t>(Get(b, hdr::kStatus)); }
  uint64_t tid() const { return Get(b, hdr::kTid); }
  uint16_t attr_id() const { return static_cast<uint16_t>(Get(b, hdr::kAttrId)); }
  uint32_t attr_mod() const { return static_cast<uint32_t>(Get(b, hdr::kAttrMod)); }
  // The R bit only: TrapRepress answers a Trap without it, and each caller decides whether that
  // counts as a response (the kernel's ib_response_mad() says it does).
  bool is_response() const { return (b[3] & method::kResponse) != 0; }
  bool is_dr() const { return b[1] == mgmt_class::kSubnDirected; }
  bool dr_direction() const { return Get(b, hdr::kDrDirection) != 0; }
  uint8_t hop_ptr() const { return b[6]; }
  uint8_t hop_cnt() const { return b[7]; }
  uint16_t dr_slid() const { return static_cast<uint16_t>(Get(b, hdr::kDrSlid)); }
  uint16_t dr_dlid() const { return static_cast<uint16_t>(Get(b, hdr::kDrDlid)); }
  uint8_t initial_path(int i) const { return b[128 + i]; }
  uint8_t return_path(int i) const { return b[192 + i]; }
  // Meaningful on vendor range 2 classes only (IsVendorRange2); needs 40 bytes.
  uint32_t vendor_oui() const { return static_cast<uint32_t>(Get(b, hdr::kVendorOui)); }
  Byte* smp_data() const { return b + kSmpDataOffset; }
  Byte* gs_data() const { return b + kGsDataOffset; }

  void set_method(uint8_t m) requires kWritable { b[3] = m; }
  // The status word; on a DR SMP the D bit shares it and is kept.
  void set_status(uint16_t s) requires kWritable {
    if (is_dr())
      Set(b, hdr::kDrStatus, s & 0x7FFF);
    else
      Set(b, hdr::kStatus, s);
  }
  void set_tid(uint64_t tid) requires kWritable { Set(b, hdr::kTid, tid); }
  void set_direction(bool d) requires kWritable { Set(b, hdr::kDrDirection, d ? 1 : 0); }
  void set_hop_ptr(uint8_t p) requires kWritable { b[6] = p; }
  void set_return_path(int i, uint8_t port) requires kWritable { b[192 + i] = port; }
};

using MadView = BasicMadView<uint8_t>;
using ConstMadView = BasicMadView<const uint8_t>;

}  // namespace ibemu::mad
