// A field of a management datagram, described once: where it is (byte, and bit counted from the
// most significant bit of that byte, as the IBA spec numbers them) and how wide. Encoding,
// decoding and printing all derive from this description, so an attribute's layout is written in
// exactly one place (the tables in *_attributes.h).
#pragma once
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

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

// Any field up to 64 bits wide, bit by bit (Get and Set take these for the odd shapes).
uint64_t GetSpanning(const uint8_t* base, const Field& f);
void SetSpanning(uint8_t* base, const Field& f, uint64_t value);

// A big-endian unsigned integer of type T at p, read or written whole; the swap only where the
// host is little-endian (std::byteswap is C++23).
template <typename T>
inline T ToFromBigEndian(T v) {
  static_assert(std::is_unsigned_v<T> &&
                (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8));
  static_assert(std::endian::native == std::endian::little ||
                std::endian::native == std::endian::big);
  if constexpr (std::endian::native == std::endian::big || sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(T) == 4) {
    return __builtin_bswap32(v);
  } else {
    return __builtin_bswap64(v);
  }
}
template <typename T>
inline uint64_t LoadBigEndian(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return ToFromBigEndian(v);
}
template <typename T>
inline void StoreBigEndian(uint8_t* p, uint64_t value) {
  T v = ToFromBigEndian(static_cast<T>(value));
  std::memcpy(p, &v, sizeof v);
}

// Fields up to 64 bits wide, big-endian on the wire. Inline because every SMP an emulated node
// answers reads and writes dozens of fields, nearly all whole bytes, 16, 32 or 64 bits at a byte
// boundary, or within one byte: with the field a constant those are one load or store.
inline uint64_t Get(const uint8_t* base, const Field& f) {
  const uint8_t* p = base + f.byte;
  if (f.bit == 0) {
    switch (f.bits) {
      case 8:
        return p[0];
      case 16:
        return LoadBigEndian<uint16_t>(p);
      case 32:
        return LoadBigEndian<uint32_t>(p);
      case 64:
        return LoadBigEndian<uint64_t>(p);
      default:
        break;
    }
  }
  if (f.bit + f.bits <= 8) return (p[0] >> (8 - f.bit - f.bits)) & ((1u << f.bits) - 1);
  return GetSpanning(base, f);
}

inline void Set(uint8_t* base, const Field& f, uint64_t value) {
  uint8_t* p = base + f.byte;
  if (f.bit == 0) {
    switch (f.bits) {
      case 8:
        p[0] = static_cast<uint8_t>(value);
        return;
      case 16:
        return StoreBigEndian<uint16_t>(p, value);
      case 32:
        return StoreBigEndian<uint32_t>(p, value);
      case 64:
        return StoreBigEndian<uint64_t>(p, value);
      default:
        break;
    }
  }
  if (f.bit + f.bits <= 8) {
    unsigned shift = 8u - f.bit - f.bits;
    unsigned mask = ((1u << f.bits) - 1) << shift;
    p[0] = static_cast<uint8_t>((p[0] & ~mask) | ((static_cast<unsigned>(value) << shift) & mask));
    return;
  }
  SetSpanning(base, f, value);
}
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
