// Writes IB packets to a pcap file the way ibdump does: link type 197 (ERF), each packet in an ERF
// record of type 21 (InfiniBand). Debian's tshark decodes this; it does not read link type 247.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ibemu::capture {

class PcapWriter {
 public:
  PcapWriter() = default;
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // Returns false (and leaves the writer closed) when the file cannot be created.
  bool Open(const std::string& path);
  bool is_open() const { return f_ != nullptr; }
  // `bytes` is the whole packet from the LRH through the VCRC; `time_ps` is virtual time.
  void Write(int64_t time_ps, const uint8_t* bytes, size_t len);
  uint64_t packets() const { return packets_; }
  void Close();

 private:
  std::FILE* f_ = nullptr;
  uint64_t packets_ = 0;
};

// Lays out a full packet (headers, zero payload, pad, ICRC, VCRC) into `out`.
void SerializePacket(const uint8_t* hdr, size_t hdr_len, uint32_t payload_len, uint32_t pad,
                     std::vector<uint8_t>* out);

}  // namespace ibemu::capture
