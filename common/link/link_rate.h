// Link width and speed (IBA vol. 2 / PortInfo LinkWidthActive, LinkSpeedActive) and the data rate
// and serialisation times that follow from them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ibemu::link {

// Virtual time is integer picoseconds everywhere (STYLE.md).
using SimTime = int64_t;
constexpr SimTime kPsPerNs = 1000;
constexpr SimTime kPsPerUs = 1000 * kPsPerNs;
constexpr SimTime kPsPerMs = 1000 * kPsPerUs;
constexpr SimTime kPsPerSec = 1000 * kPsPerMs;

enum class Width : uint8_t { k1x = 1, k4x = 4, k8x = 8, k12x = 12 };
enum class Speed : uint8_t { kSDR, kDDR, kQDR, kFDR, kEDR, kHDR, kNDR };

struct SpeedInfo {
  const char* name;
  int64_t lane_baud;  // signalling rate of one lane, symbols (bits) per second
  int enc_data;       // line code: enc_data payload bits per enc_total line bits
  int enc_total;
};

const SpeedInfo& Info(Speed s);
std::optional<Speed> ParseSpeed(std::string_view name);
std::optional<Width> ParseWidth(std::string_view name);  // "4x", "4X" or "4"
std::string ToString(Width w);

// A link's rate as the exact rational lane_baud * lanes * enc_data / enc_total bits per second,
// so FDR's 64b/66b rate is not rounded before it is turned into picoseconds.
class LinkRate {
 public:
  LinkRate() : LinkRate(Width::k4x, Speed::kQDR) {}
  LinkRate(Width w, Speed s);

  Width width() const { return width_; }
  Speed speed() const { return speed_; }
  // Data rate in bits per second, rounded down; for printing and for ratios in results.
  int64_t data_bps() const;
  // Time to put `bytes` on the wire, rounded up to a whole picosecond. Packet sizes take the
  // 64-bit path; only huge byte counts need 128-bit arithmetic.
  SimTime SerializationTime(int64_t bytes) const {
    if (bytes >= 0 && bytes <= kFastBytes) {
      if (ps_per_byte_ != 0) return bytes * ps_per_byte_;
      uint64_t num = static_cast<uint64_t>(bytes) * num_per_byte_;
      return static_cast<SimTime>((num + den_ - 1) / den_);
    }
    return SlowSerializationTime(bytes);
  }
  std::string ToString() const;
  // Picoseconds per byte when they are a whole number, else 0.
  int64_t ps_per_byte() const { return ps_per_byte_; }

 private:
  static constexpr int64_t kFastBytes = 8192;  // 8192 * 8e12 * 272 < 2^64
  SimTime SlowSerializationTime(int64_t bytes) const;

  Width width_ = Width::k4x;
  Speed speed_ = Speed::kQDR;
  uint64_t num_per_byte_ = 0;  // 8 * 1e12 * enc_total
  uint64_t den_ = 1;           // lane_baud * lanes * enc_data
  // num_per_byte_ / den_ when it is a whole number of picoseconds (every speed but FDR's 64b/66b,
  // at every width but 12x), else 0. Packet paths ask for a serialisation time several times a
  // hop, and a 64-bit division is tens of cycles where a multiplication is a few.
  int64_t ps_per_byte_ = 0;
};

// A rate cap that is not a link (the host's PCIe/DMA path): bits per second.
struct ByteRate {
  int64_t bps = 0;  // 0 means unlimited
  SimTime Time(int64_t bytes) const;
};

// Signal propagation in copper and fibre is about 5 ns per metre.
constexpr SimTime PropagationDelay(double metres) {
  return static_cast<SimTime>(metres * 5.0 * kPsPerNs + 0.5);
}

}  // namespace ibemu::link
