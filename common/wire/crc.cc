#include "common/wire/crc.h"

#include <array>

#include "common/wire/lrh.h"

namespace ibemu::wire {
namespace {

// Reflected table form of the Ethernet polynomial: IB sends bits LSB first, like Ethernet.
constexpr std::array<uint32_t, 256> MakeCrc32Table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kCrc32Table = MakeCrc32Table();

// Reflected 0x100B is 0xD008.
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xD008u ^ (c >> 1) : c >> 1;
    t[i] = static_cast<uint16_t>(c);
  }
  return t;
}
constexpr auto kCrc16Table = MakeCrc16Table();

}  // namespace

uint32_t icrc(const uint8_t* pkt, size_t len) {
  // Variant fields count as all ones (IBA 7.8.1): the LRH VL for local packets; the whole LRH
  // (routers rewrite it) and the GRH TClass, FlowLabel and HopLmt for global ones; and BTH byte 4
  // (FECN, BECN, reserved) in both.
  bool global = len > 1 && (pkt[1] & 0x3) == static_cast<uint8_t>(Lnh::kIbaGlobal);
  size_t bth = global ? kLrhBytes + 40 : kLrhBytes;
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < len; ++i) {
    uint8_t byte = pkt[i];
    if (i == 0) byte |= 0xF0;
    if (global) {
      if (i < static_cast<size_t>(kLrhBytes)) byte = 0xFF;
      size_t g = i - kLrhBytes;  // GRH: IPVer(4) TClass(8) FlowLabel(20) | PayLen NxtHdr HopLmt
      if (i >= static_cast<size_t>(kLrhBytes) && g < 4) byte = g == 0 ? (byte | 0x0F) : 0xFF;
      if (i >= static_cast<size_t>(kLrhBytes) && g == 7) byte = 0xFF;
    }
    if (i == bth + 4) byte = 0xFF;
    c = kCrc32Table[(c ^ byte) & 0xFF] ^ (c >> 8);
  }
  return ~c;
}

uint16_t crc16_ib(const uint8_t* data, size_t len) {
  uint16_t c = 0xFFFF;
  for (size_t i = 0; i < len; ++i) c = kCrc16Table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
  return static_cast<uint16_t>(~c);
}

}  // namespace ibemu::wire
