// A MAD between a host library and `ibemu up` without protobuf: the two messages every MAD of an
// attached tool travels in (umad.proto's Send to the fabric and Receive from it) as a fixed
// header and the MAD's bytes. Parsing and building those messages, with their nested Address and
// bytes field, cost each side about as much as the rest of its work on a MAD (OpenSM's
// receiving thread spent more instructions in protobuf than in the library's own code).
//
// Both encodings share the sockets: a protobuf message never starts with a zero byte (its first
// byte is a field's tag, and field number 0 does not exist), and a frame always does. The two
// ends agree on frames at Attach (umad.proto's mad_frames) and are on one host (the sockets are
// local), so the header is copied as it lies in memory. Its layout is fixed (the static_assert
// below): a change to it needs a new kind, or a new Attach field, for builds to tell it apart.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

namespace ibemu::transport {

// umad.proto's Address, in host byte order.
struct MadFrameAddress {
  uint32_t qpn = 0;
  uint32_t qkey = 0;
  uint32_t flow_label = 0;
  uint16_t lid = 0;
  uint16_t pkey_index = 0;
  uint8_t sl = 0;
  uint8_t path_bits = 0;
  uint8_t grh_present = 0;
  uint8_t hop_limit = 0;
  uint8_t traffic_class = 0;
  uint8_t reserved[3] = {};
  uint8_t gid[16] = {};
};

enum class MadFrameKind : uint8_t {
  kSend = 1,     // to the fabric: a MAD the program sends (umad.proto's Send)
  kReceive = 2,  // from the fabric: a MAD for the program (umad.proto's Receive)
};

struct MadFrameHeader {
  uint8_t zero = 0;  // what tells a frame from a protobuf message
  MadFrameKind kind = MadFrameKind::kSend;
  uint16_t reserved = 0;
  uint32_t handle = 0;  // the attachment's, as in Send and Receive
  MadFrameAddress addr;
};
static_assert(std::is_trivially_copyable_v<MadFrameHeader> && sizeof(MadFrameHeader) == 48);

// The largest MAD a frame carries: the one MAD of a Send or a Receive (RMPP travels segment by
// segment).
inline constexpr size_t kMadFrameMaxMad = 2048;

inline bool IsMadFrame(const void* data, size_t size) {
  return size > 0 && *static_cast<const uint8_t*>(data) == 0;
}

// Writes the frame into `out` (its capacity is kept from one frame to the next).
inline void EncodeMadFrame(const MadFrameHeader& h, const void* mad, size_t len, std::string* out) {
  out->resize(sizeof h + len);
  std::memcpy(out->data(), &h, sizeof h);
  std::memcpy(out->data() + sizeof h, mad, len);
}

// A frame of a known kind with a MAD of 1 to kMadFrameMaxMad bytes: the header, and where the
// MAD lies in `data`. Anything else is not a frame this build wrote.
inline bool DecodeMadFrame(const void* data, size_t size, MadFrameHeader* h, const uint8_t** mad,
                           size_t* len) {
  if (size <= sizeof *h || size - sizeof *h > kMadFrameMaxMad) return false;
  std::memcpy(h, data, sizeof *h);
  if (h->zero != 0 || (h->kind != MadFrameKind::kSend && h->kind != MadFrameKind::kReceive))
    return false;
  *mad = static_cast<const uint8_t*>(data) + sizeof *h;
  *len = size - sizeof *h;
  return true;
}

// As above, and of kind `want`: a fabric takes only Sends, a library only Receives.
inline bool DecodeMadFrame(const void* data, size_t size, MadFrameKind want, MadFrameHeader* h,
                           const uint8_t** mad, size_t* len) {
  return DecodeMadFrame(data, size, h, mad, len) && h->kind == want;
}

}  // namespace ibemu::transport
