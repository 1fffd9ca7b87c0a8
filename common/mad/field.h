// A field of a management datagram, described once: where it is (byte, and bit counted from the
// most significant bit of that byte, as the IBA spec numbers them) and how wide. Encoding,
// decoding and printing all derive from this description, so an attribute's layout is written in
// exactly one place (the tables in *_attributes.h).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ibemu::mad {

enum class Format : uint8_t {
  kDec,    // unsigned decimal
  kHex,    // 0x-prefixed, zero-padded to the field width
  kText,   // NUL-padded text (NodeDescription)
  kBytes,  // a run of bytes printed as hex (tables, masks, GIDs)
};

struct Field {
  std::string_view name;  // as libibmad's mad_field_name() spells it, so dumps read the same
  uint16_t byte = 0;      // offset from the start of the attribute (or the MAD, for headers)
  uint8_t bit = 0;        // 0 = the byte's most significant bit
  uint16_t bits = 0;
  Format format = Format::kDec;

  // Last byte the field touches, plus one.
  constexpr uint32_t end() const { return byte + (bit + bits + 7u) / 8u; }
};

// Fields up to 64 bits wide, big-endian on the wire.
uint64_t Get(const uint8_t* base, const Field& f);
void Set(uint8_t* base, const Field& f, uint64_t value);
// Wider fields are whole bytes (IBA aligns them): a view of the bytes.
inline std::span<const uint8_t> Bytes(const uint8_t* base, const Field& f) {
  return {base + f.byte, static_cast<size_t>(f.bits / 8)};
}
inline std::span<uint8_t> Bytes(uint8_t* base, const Field& f) {
  return {base + f.byte, static_cast<size_t>(f.bits / 8)};
}

// "Name:.......value" lines, one per field, in the style of libibmad's dumps.
std::string FormatValue(const uint8_t* base, const Field& f);
std::string Print(const uint8_t* base, std::span<const Field* const> fields);

}  // namespace ibemu::mad
