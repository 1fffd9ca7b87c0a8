// The few fields of the MAD common header (IBA vol. 1, 13.4.3) that the umad layer reads to route
// a MAD: class, class version, method, TID and, for vendor range 2, the OUI. The kernel's ib_mad
// routes on exactly these; the payload is never interpreted here.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ibemu::umad {

constexpr size_t kMadBytes = 256;       // one MAD; longer messages need RMPP
constexpr size_t kMadHeaderBytes = 24;  // the common header
constexpr size_t kRmppHeaderEnd = 36;   // common header + RMPP header (IBA 13.6.2.1)

namespace method {
constexpr uint8_t kSend = 0x03;
constexpr uint8_t kTrapRepress = 0x07;
constexpr uint8_t kResponseBit = 0x80;
}  // namespace method

// A read-only view of the first bytes of a MAD; callers guarantee at least kMadHeaderBytes.
struct MadView {
  const uint8_t* b;

  uint8_t mgmt_class() const { return b[1]; }
  uint8_t class_version() const { return b[2]; }
  uint8_t method() const { return b[3]; }
  uint64_t tid() const {
    uint64_t v = 0;
    for (int i = 8; i < 16; ++i) v = v << 8 | b[i];
    return v;
  }
  uint16_t attr_id() const { return static_cast<uint16_t>(b[16] << 8 | b[17]); }
  // Vendor MADs of range 2 carry the OUI after the RMPP header and one reserved byte (IBA
  // 13.4.3.2, ib_vendor_mad).
  uint32_t vendor_oui() const { return uint32_t{b[37]} << 16 | uint32_t{b[38]} << 8 | b[39]; }
};

inline void SetTid(uint8_t* mad, uint64_t tid) {
  for (int i = 15; i >= 8; --i, tid >>= 8) mad[i] = static_cast<uint8_t>(tid);
}

// ib_response_mad(): the R bit, and TrapRepress, which answers a Trap without carrying the R bit.
// Responses are routed to the agent that owns the TID; everything else by class and method.
inline bool IsResponse(uint8_t m) {
  return (m & method::kResponseBit) != 0 || m == method::kTrapRepress;
}

// ib_umad_write(): the kernel stamps the agent's hi_tid into TID bits 63..32 of requests that
// will draw a response, so the response finds its way back. Send and TrapRepress are left alone.
inline bool StampsTid(uint8_t m) {
  return !IsResponse(m) && m != method::kSend;
}

// Subnet management classes go to QP0, everything else to QP1 (IBA 13.5.1).
inline uint8_t QpnForClass(uint8_t mgmt_class) {
  return (mgmt_class == 0x01 || mgmt_class == 0x81) ? 0 : 1;
}

// Vendor range 2 classes are told apart by OUI (IBA 13.4.4).
inline bool IsVendorRange2(uint8_t mgmt_class) {
  return mgmt_class >= 0x30 && mgmt_class <= 0x4F;
}

}  // namespace ibemu::umad
