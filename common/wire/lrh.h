// Local Route Header (IBA vol. 1, 7.7): the first 8 bytes of every IB packet.
#pragma once
#include <cstdint>

namespace ibemu::wire {

constexpr int kLrhBytes = 8;

// Link Next Header values (IBA 7.7.3).
enum class Lnh : uint8_t { kRaw = 0, kIpNonIba = 1, kIbaLocal = 2, kIbaGlobal = 3 };

// Accessors work on the header bytes in place, so the bytes a switch forwards are the bytes the
// capture shows; there is no second, parsed copy to drift out of step.
struct Lrh {
  uint8_t* b;

  uint8_t vl() const { return b[0] >> 4; }
  uint8_t lver() const { return b[0] & 0xF; }
  uint8_t sl() const { return b[1] >> 4; }
  Lnh lnh() const { return static_cast<Lnh>(b[1] & 0x3); }
  uint16_t dlid() const { return static_cast<uint16_t>(b[2] << 8 | b[3]); }
  // PktLen counts 4-byte words from the LRH up to and including the ICRC (VCRC excluded).
  uint16_t pkt_len() const { return static_cast<uint16_t>((b[4] & 0x7) << 8 | b[5]); }
  uint16_t slid() const { return static_cast<uint16_t>(b[6] << 8 | b[7]); }

  void set_vl(uint8_t v) { b[0] = static_cast<uint8_t>((v & 0xF) << 4 | (b[0] & 0xF)); }
  void set_lver(uint8_t v) { b[0] = static_cast<uint8_t>((b[0] & 0xF0) | (v & 0xF)); }
  void set_sl(uint8_t v) { b[1] = static_cast<uint8_t>((v & 0xF) << 4 | (b[1] & 0x0F)); }
  void set_lnh(Lnh v) { b[1] = static_cast<uint8_t>((b[1] & 0xFC) | static_cast<uint8_t>(v)); }
  void set_dlid(uint16_t v) {
    b[2] = static_cast<uint8_t>(v >> 8);
    b[3] = static_cast<uint8_t>(v);
  }
  void set_pkt_len(uint16_t words) {
    b[4] = static_cast<uint8_t>((b[4] & 0xF8) | ((words >> 8) & 0x7));
    b[5] = static_cast<uint8_t>(words);
  }
  void set_slid(uint16_t v) {
    b[6] = static_cast<uint8_t>(v >> 8);
    b[7] = static_cast<uint8_t>(v);
  }
};

}  // namespace ibemu::wire
