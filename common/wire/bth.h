// Base Transport Header (IBA vol. 1, 9.2), 12 bytes after the LRH (or GRH).
#pragma once
#include <cstdint>

namespace ibemu::wire {

constexpr int kBthBytes = 12;

struct Bth {
  uint8_t* b;

  uint8_t opcode() const { return b[0]; }
  bool se() const { return b[1] & 0x80; }
  bool migreq() const { return b[1] & 0x40; }
  uint8_t pad_cnt() const { return (b[1] >> 4) & 0x3; }
  uint8_t tver() const { return b[1] & 0xF; }
  uint16_t pkey() const { return static_cast<uint16_t>(b[2] << 8 | b[3]); }
  // FECN and BECN occupy the top two bits of byte 4 (IBA annex A10, congestion control).
  bool fecn() const { return b[4] & 0x80; }
  bool becn() const { return b[4] & 0x40; }
  // The six reserved bits after BECN (Resv6a): zero on the wire unless a mechanism that needs
  // more header bits (MVCM's validation bit) uses them.
  uint8_t resv6a() const { return b[4] & 0x3F; }
  uint32_t dest_qp() const { return uint32_t{b[5]} << 16 | uint32_t{b[6]} << 8 | b[7]; }
  bool ack_req() const { return b[8] & 0x80; }
  uint32_t psn() const { return uint32_t{b[9]} << 16 | uint32_t{b[10]} << 8 | b[11]; }

  void set_opcode(uint8_t v) { b[0] = v; }
  void set_se(bool v) { b[1] = static_cast<uint8_t>((b[1] & 0x7F) | (v ? 0x80 : 0)); }
  void set_migreq(bool v) { b[1] = static_cast<uint8_t>((b[1] & 0xBF) | (v ? 0x40 : 0)); }
  void set_pad_cnt(uint8_t v) { b[1] = static_cast<uint8_t>((b[1] & 0xCF) | ((v & 0x3) << 4)); }
  void set_tver(uint8_t v) { b[1] = static_cast<uint8_t>((b[1] & 0xF0) | (v & 0xF)); }
  void set_pkey(uint16_t v) {
    b[2] = static_cast<uint8_t>(v >> 8);
    b[3] = static_cast<uint8_t>(v);
  }
  void set_fecn(bool v) { b[4] = static_cast<uint8_t>((b[4] & 0x7F) | (v ? 0x80 : 0)); }
  void set_becn(bool v) { b[4] = static_cast<uint8_t>((b[4] & 0xBF) | (v ? 0x40 : 0)); }
  void set_resv6a(uint8_t v) { b[4] = static_cast<uint8_t>((b[4] & 0xC0) | (v & 0x3F)); }
  void set_dest_qp(uint32_t v) {
    b[5] = static_cast<uint8_t>(v >> 16);
    b[6] = static_cast<uint8_t>(v >> 8);
    b[7] = static_cast<uint8_t>(v);
  }
  void set_ack_req(bool v) { b[8] = static_cast<uint8_t>((b[8] & 0x7F) | (v ? 0x80 : 0)); }
  void set_psn(uint32_t v) {
    b[9] = static_cast<uint8_t>(v >> 16);
    b[10] = static_cast<uint8_t>(v >> 8);
    b[11] = static_cast<uint8_t>(v);
  }
};

}  // namespace ibemu::wire
