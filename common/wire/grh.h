// Global Route Header (IBA vol. 1, 8.3), 40 bytes between the LRH and the BTH when the LRH's
// LNH is IBA global (3). Laid out as an IPv6 header: IPVer(4) TClass(8) FlowLabel(20), PayLen(16)
// NxtHdr(8) HopLmt(8), SGID(128), DGID(128). PayLen counts the bytes after the GRH up to and
// including the ICRC; NxtHdr is 0x1B for an IBA transport header.
#pragma once
#include <cstdint>
#include <cstring>

namespace ibemu::wire {

constexpr int kGrhBytes = 40;
constexpr uint8_t kGrhNextHeaderIba = 0x1B;

struct Grh {
  uint8_t* b;

  uint8_t ip_ver() const { return b[0] >> 4; }
  uint8_t tclass() const { return static_cast<uint8_t>((b[0] & 0xF) << 4 | b[1] >> 4); }
  uint32_t flow_label() const { return uint32_t{b[1] & 0xFu} << 16 | uint32_t{b[2]} << 8 | b[3]; }
  uint16_t pay_len() const { return static_cast<uint16_t>(b[4] << 8 | b[5]); }
  uint8_t next_header() const { return b[6]; }
  uint8_t hop_limit() const { return b[7]; }
  const uint8_t* sgid() const { return b + 8; }
  const uint8_t* dgid() const { return b + 24; }

  // Version 6, as every GRH carries.
  void set_ip_ver_tclass_flow(uint8_t tclass, uint32_t flow_label) {
    b[0] = static_cast<uint8_t>(6 << 4 | tclass >> 4);
    b[1] = static_cast<uint8_t>((tclass & 0xF) << 4 | (flow_label >> 16 & 0xF));
    b[2] = static_cast<uint8_t>(flow_label >> 8);
    b[3] = static_cast<uint8_t>(flow_label);
  }
  void set_pay_len(uint16_t v) {
    b[4] = static_cast<uint8_t>(v >> 8);
    b[5] = static_cast<uint8_t>(v);
  }
  void set_next_header(uint8_t v) { b[6] = v; }
  void set_hop_limit(uint8_t v) { b[7] = v; }
  void set_sgid(const uint8_t* gid) { std::memcpy(b + 8, gid, 16); }
  void set_dgid(const uint8_t* gid) { std::memcpy(b + 24, gid, 16); }
};

}  // namespace ibemu::wire
