#include "common/link/link_rate.h"

#include <array>
#include <cctype>

namespace ibemu::link {
namespace {

// HDR and NDR use PAM4 with RS-FEC; the effective payload rate is 50 and 100 Gbit/s per lane, so
// their "encoding" here is the ratio of payload rate to signalling rate.
constexpr std::array<SpeedInfo, 7> kSpeeds{{
    {"SDR", 2'500'000'000, 8, 10},
    {"DDR", 5'000'000'000, 8, 10},
    {"QDR", 10'000'000'000, 8, 10},
    {"FDR", 14'062'500'000, 64, 66},
    {"EDR", 25'781'250'000, 64, 66},
    {"HDR", 53'125'000'000, 256, 272},
    {"NDR", 106'250'000'000, 256, 272},
}};

std::string Upper(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return r;
}

}  // namespace

const SpeedInfo& Info(Speed s) {
  return kSpeeds[static_cast<size_t>(s)];
}

std::optional<Speed> ParseSpeed(std::string_view name) {
  std::string u = Upper(name);
  for (size_t i = 0; i < kSpeeds.size(); ++i)
    if (u == kSpeeds[i].name) return static_cast<Speed>(i);
  return std::nullopt;
}

std::optional<Width> ParseWidth(std::string_view name) {
  std::string u = Upper(name);
  if (!u.empty() && u.back() == 'X') u.pop_back();
  if (u == "1") return Width::k1x;
  if (u == "4") return Width::k4x;
  if (u == "8") return Width::k8x;
  if (u == "12") return Width::k12x;
  return std::nullopt;
}

std::string ToString(Width w) {
  return std::to_string(static_cast<int>(w)) + "x";
}

int64_t LinkRate::data_bps() const {
  const SpeedInfo& i = Info(speed_);
  __int128 r = static_cast<__int128>(i.lane_baud) * static_cast<int>(width_) * i.enc_data;
  return static_cast<int64_t>(r / i.enc_total);
}

LinkRate::LinkRate(Width w, Speed s) : width_(w), speed_(s) {
  const SpeedInfo& i = Info(s);
  num_per_byte_ = 8ull * static_cast<uint64_t>(kPsPerSec) * static_cast<uint64_t>(i.enc_total);
  den_ = static_cast<uint64_t>(i.lane_baud) * static_cast<uint64_t>(static_cast<int>(w)) *
         static_cast<uint64_t>(i.enc_data);
  if (num_per_byte_ % den_ == 0) ps_per_byte_ = static_cast<int64_t>(num_per_byte_ / den_);
}

SimTime LinkRate::SlowSerializationTime(int64_t bytes) const {
  const SpeedInfo& i = Info(speed_);
  __int128 num = static_cast<__int128>(bytes) * 8 * kPsPerSec * i.enc_total;
  __int128 den = static_cast<__int128>(i.lane_baud) * static_cast<int>(width_) * i.enc_data;
  return static_cast<SimTime>((num + den - 1) / den);
}

std::string LinkRate::ToString() const {
  return link::ToString(width_) + " " + Info(speed_).name;
}

SimTime ByteRate::Time(int64_t bytes) const {
  if (bps <= 0) return 0;
  __int128 num = static_cast<__int128>(bytes) * 8 * kPsPerSec;
  return static_cast<SimTime>((num + bps - 1) / bps);
}

}  // namespace ibemu::link
