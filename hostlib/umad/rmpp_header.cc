#include "hostlib/umad/rmpp_header.h"

#include <endian.h>

#include <algorithm>
#include <cstring>

namespace ibemu::umad {

std::vector<uint8_t> RmppReply(const uint8_t* mad, const ib_mad_addr_t& to, RmppHeader reply) {
  std::vector<uint8_t> out(sizeof(ib_user_mad) + mad::kMadBytes, 0);
  ib_user_mad hdr;
  std::memset(&hdr, 0, sizeof hdr);
  hdr.addr = to;
  hdr.addr.qkey = htobe32(mad::kQp1QKey);
  hdr.length = static_cast<uint32_t>(out.size());
  std::memcpy(out.data(), &hdr, sizeof hdr);

  uint8_t* m = out.data() + sizeof hdr;
  const size_t hdr_len = std::max(MadDataOffset(mad[1]), kRmppHeaderEnd);
  std::memcpy(m, mad, hdr_len);
  m[3] ^= mad::method::kResponse;
  reply.resp_time = RmppHeader::Read(mad).resp_time;
  reply.Write(m);
  return out;
}

}  // namespace ibemu::umad
