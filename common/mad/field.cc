#include "common/mad/field.h"

#include <cstdio>

namespace ibemu::mad {

using U128 = unsigned __int128;

uint64_t GetSpanning(const uint8_t* base, const Field& f) {
  // Gather the bytes the field spans (at most 9 for a 64-bit field at an odd bit) MSB first,
  // then drop the bits after the field and keep the field's width.
  U128 acc = 0;
  uint32_t first = f.byte, last = f.end();
  for (uint32_t i = first; i < last; ++i) acc = acc << 8 | base[i];
  uint32_t trailing = (last - first) * 8 - f.bit - f.bits;
  acc >>= trailing;
  if (f.bits < 64) acc &= (U128{1} << f.bits) - 1;
  return static_cast<uint64_t>(acc);
}

void SetSpanning(uint8_t* base, const Field& f, uint64_t value) {
  uint32_t first = f.byte, last = f.end();
  uint32_t trailing = (last - first) * 8 - f.bit - f.bits;
  U128 mask = f.bits < 64 ? (U128{1} << f.bits) - 1 : U128{~uint64_t{0}};
  U128 v = (U128{value} & mask) << trailing;
  mask <<= trailing;
  for (uint32_t i = last; i-- > first;) {
    uint8_t m = static_cast<uint8_t>(mask);
    base[i] = static_cast<uint8_t>((base[i] & ~m) | (static_cast<uint8_t>(v) & m));
    mask >>= 8;
    v >>= 8;
  }
}

std::string FormatValue(const uint8_t* base, const Field& f) {
  char buf[160];
  switch (f.format) {
    case Format::kText: {
      std::string s(reinterpret_cast<const char*>(base + f.byte), f.bits / 8);
      return s.substr(0, s.find('\0'));
    }
    case Format::kBytes: {
      std::string s;
      for (uint8_t b : Bytes(base, f)) {
        std::snprintf(buf, sizeof buf, "%02x", b);
        s += buf;
      }
      return s;
    }
    case Format::kHex:
      std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>((f.bits + 3) / 4),
                    static_cast<unsigned long long>(Get(base, f)));
      return buf;
    case Format::kDec:
    default:
      return std::to_string(Get(base, f));
  }
}

std::string Print(const uint8_t* base, std::span<const Field* const> fields) {
  std::string out;
  for (const Field* f : fields) {
    std::string name(f->name);
    name += ':';
    if (name.size() < 32) name.append(32 - name.size(), '.');
    out += name + FormatValue(base, *f) + "\n";
  }
  return out;
}

}  // namespace ibemu::mad
