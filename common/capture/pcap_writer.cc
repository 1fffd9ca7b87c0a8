#include "common/capture/pcap_writer.h"

#include "common/wire/crc.h"

namespace ibemu::capture {
namespace {

constexpr uint32_t kPcapMagicNs = 0xa1b23c4d;  // nanosecond timestamps
constexpr uint32_t kLinkTypeErf = 197;
constexpr uint8_t kErfTypeInfiniband = 21;
constexpr uint8_t kErfFlagVarLen = 0x04;

void Le32(std::vector<uint8_t>* b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b->push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void Le16(std::vector<uint8_t>* b, uint16_t v) {
  b->push_back(static_cast<uint8_t>(v));
  b->push_back(static_cast<uint8_t>(v >> 8));
}
void Be16(std::vector<uint8_t>* b, uint16_t v) {
  b->push_back(static_cast<uint8_t>(v >> 8));
  b->push_back(static_cast<uint8_t>(v));
}

}  // namespace

PcapWriter::~PcapWriter() {
  Close();
}

bool PcapWriter::Open(const std::string& path) {
  Close();
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return false;
  std::vector<uint8_t> h;
  Le32(&h, kPcapMagicNs);
  Le16(&h, 2);
  Le16(&h, 4);
  Le32(&h, 0);  // thiszone
  Le32(&h, 0);  // sigfigs
  Le32(&h, 65535);
  Le32(&h, kLinkTypeErf);
  std::fwrite(h.data(), 1, h.size(), f_);
  return true;
}

void PcapWriter::Write(int64_t time_ps, const uint8_t* bytes, size_t len) {
  if (!f_) return;
  uint64_t ns = static_cast<uint64_t>(time_ps / 1000);
  uint64_t sec = ns / 1'000'000'000ull, frac_ns = ns % 1'000'000'000ull;
  std::vector<uint8_t> r;
  // ERF header: 64-bit little-endian timestamp (seconds . binary fraction), type, flags,
  // then big-endian record length, loss counter and wire length.
  uint64_t ts = sec << 32 | ((frac_ns << 32) / 1'000'000'000ull);
  for (int i = 0; i < 8; ++i) r.push_back(static_cast<uint8_t>(ts >> (8 * i)));
  r.push_back(kErfTypeInfiniband);
  r.push_back(kErfFlagVarLen);
  Be16(&r, static_cast<uint16_t>(16 + len));
  Be16(&r, 0);
  Be16(&r, static_cast<uint16_t>(len));
  r.insert(r.end(), bytes, bytes + len);

  std::vector<uint8_t> rec;
  Le32(&rec, static_cast<uint32_t>(sec));
  Le32(&rec, static_cast<uint32_t>(frac_ns));
  Le32(&rec, static_cast<uint32_t>(r.size()));
  Le32(&rec, static_cast<uint32_t>(r.size()));
  std::fwrite(rec.data(), 1, rec.size(), f_);
  std::fwrite(r.data(), 1, r.size(), f_);
  ++packets_;
}

void PcapWriter::Close() {
  if (f_) std::fclose(f_);
  f_ = nullptr;
}

void SerializePacket(const uint8_t* hdr, size_t hdr_len, uint32_t payload_len, uint32_t pad,
                     std::vector<uint8_t>* out) {
  out->assign(hdr, hdr + hdr_len);
  out->resize(hdr_len + payload_len + pad, 0);
  uint32_t icrc = wire::icrc(out->data(), out->size());
  // The ICRC goes on the wire least significant byte first, like Ethernet's FCS.
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(icrc >> (8 * i)));
  uint16_t vcrc = wire::crc16_ib(out->data(), out->size());
  out->push_back(static_cast<uint8_t>(vcrc));
  out->push_back(static_cast<uint8_t>(vcrc >> 8));
}

}  // namespace ibemu::capture
