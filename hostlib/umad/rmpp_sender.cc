#include "hostlib/umad/rmpp_sender.h"

#include <endian.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/mad/mad_header.h"

namespace ibemu::umad {

using mad::ConstMadView;
using mad::kMadBytes;

namespace {

constexpr size_t kHdr = sizeof(ib_user_mad);

}  // namespace

int RmppSender::Start(uint32_t agent_id, uint8_t rmpp_version, std::vector<uint8_t> umad,
                      int timeout_ms, int retries, bool await_response, Clock::time_point now,
                      WireMads& wire) {
  const uint8_t* mad = umad.data() + kHdr;
  const size_t len = umad.size() - kHdr;
  const ConstMadView view{mad};
  Transfer t;
  t.hdr_len = std::max(MadDataOffset(view.mgmt_class()), kRmppHeaderEnd);
  if (len < t.hdr_len) return -EINVAL;
  t.agent_id = agent_id;
  t.tid = view.tid();
  t.mgmt_class = view.mgmt_class();
  t.dlid = be16toh(HeaderOf(umad).addr.lid);
  for (const Transfer& s : sends_)
    if (s.tid == t.tid && s.mgmt_class == t.mgmt_class && s.dlid == t.dlid) return -EINVAL;

  // ib_create_send_mad(): the data is padded to whole segments; a message without data still
  // takes one (all padding).
  t.seg_size = kMadBytes - t.hdr_len;
  t.data_len = static_cast<uint32_t>(len - t.hdr_len);
  const auto seg_size = static_cast<uint32_t>(t.seg_size);
  t.pad = t.data_len ? (seg_size - t.data_len % seg_size) % seg_size : seg_size;
  t.seg_count = (t.data_len + t.pad) / seg_size;
  t.rmpp_version = rmpp_version;
  t.max_retries = t.retries_left = std::max(retries, 0);
  t.timeout = std::chrono::milliseconds(std::max(timeout_ms, 0));
  t.ack_timeout = (timeout_ms <= 0 || std::chrono::milliseconds(timeout_ms) > kMaxAckTimeout)
                      ? kMaxAckTimeout
                      : std::chrono::milliseconds(timeout_ms);
  t.await_response = await_response && timeout_ms > 0;
  t.umad = std::move(umad);
  sends_.push_back(std::move(t));
  SendWindow(sends_.back(), now, wire);
  return 0;
}

// send_next_seg(): the header as written, RMPP DATA with Active on every segment, First on the
// first, Last on the last. PayloadLength counts kRmppSegmentPayload per segment, so it includes
// the class header every segment repeats: the whole message in the first segment, the last
// segment's share in the last one, 0 in between.
std::vector<uint8_t> RmppSender::Segment(const Transfer& t, uint32_t seg) const {
  std::vector<uint8_t> out(kHdr + kMadBytes, 0);
  std::memcpy(out.data(), t.umad.data(), kHdr);
  uint8_t* m = out.data() + kHdr;
  const uint8_t* src = t.umad.data() + kHdr;
  std::memcpy(m, src, t.hdr_len);

  RmppHeader h;
  h.version = t.rmpp_version;
  h.type = kRmppData;
  h.flags = kRmppActive;
  if (seg == 1) {
    h.flags |= kRmppFirst;
    h.paylen_newwin = t.seg_count * kRmppSegmentPayload - t.pad;
  }
  if (seg == t.seg_count) {
    h.flags |= kRmppLast;
    h.paylen_newwin = kRmppSegmentPayload - t.pad;
  }
  h.seg_num = seg;
  h.Write(m);

  const size_t offset = static_cast<size_t>(seg - 1) * t.seg_size;
  if (offset < t.data_len)
    std::memcpy(m + t.hdr_len, src + t.hdr_len + offset, std::min(t.seg_size, t.data_len - offset));
  return out;
}

size_t RmppSender::SendWindow(Transfer& t, Clock::time_point now, WireMads& wire) {
  const uint32_t limit = std::min(t.newwin, t.seg_count);
  size_t sent = 0;
  for (; t.last_sent < limit; ++sent) wire.push_back(Segment(t, ++t.last_sent));
  if (sent) t.deadline = now + t.ack_timeout;
  return sent;
}

// ib_find_send_mad(): same agent, TID and class, and the ACK comes from where the send went.
std::list<RmppSender::Transfer>::iterator RmppSender::Find(uint32_t agent_id, const uint8_t* mad,
                                                           const ib_mad_addr_t& from) {
  const ConstMadView view{mad};
  const uint16_t slid = be16toh(from.lid);
  return std::find_if(sends_.begin(), sends_.end(), [&](const Transfer& t) {
    return t.agent_id == agent_id && t.tid == view.tid() && t.mgmt_class == view.mgmt_class() &&
           (t.dlid == slid || t.dlid == 0xFFFF);
  });
}

uint8_t RmppSender::OnAck(uint32_t agent_id, const uint8_t* mad, const ib_mad_addr_t& from,
                          Clock::time_point now, WireMads& wire) {
  const RmppHeader h = RmppHeader::Read(mad);
  if (h.status != 0) {
    Abort(agent_id, mad, from);
    return rmpp_status::kBadStatus;
  }
  const uint32_t seg = h.seg_num;
  const uint32_t newwin = h.paylen_newwin;
  if (newwin < seg) {
    Abort(agent_id, mad, from);
    return rmpp_status::kW2S;
  }
  auto it = Find(agent_id, mad, from);
  if (it == sends_.end()) return 0;  // not ours, or a send already over
  Transfer& t = *it;
  if (t.acked) return 0;  // a repeated last ACK while the request waits for its response
  if (seg > t.seg_count || seg > t.newwin) {
    sends_.erase(it);
    return rmpp_status::kS2B;
  }
  if (newwin < t.newwin || seg < t.last_ack) return 0;  // an old ACK
  if (seg > t.last_ack) {
    t.last_ack = seg;
    t.retries_left = t.max_retries;  // progress earns the retries back
  }
  t.newwin = newwin;
  if (t.last_ack == t.seg_count) {
    if (!t.await_response) {
      sends_.erase(it);  // a response: the last ACK completes it
      return 0;
    }
    t.acked = true;
    t.deadline = now + t.timeout;
    return 0;
  }
  SendWindow(t, now, wire);
  return 0;
}

void RmppSender::Abort(uint32_t agent_id, const uint8_t* mad, const ib_mad_addr_t& from) {
  auto it = Find(agent_id, mad, from);
  if (it != sends_.end() && !it->acked) sends_.erase(it);
}

bool RmppSender::CompleteResponse(uint32_t agent_id, uint64_t tid, uint8_t mgmt_class) {
  auto it = std::find_if(sends_.begin(), sends_.end(), [&](const Transfer& t) {
    return t.await_response && t.agent_id == agent_id && t.tid == tid && t.mgmt_class == mgmt_class;
  });
  if (it == sends_.end()) return false;
  sends_.erase(it);
  return true;
}

void RmppSender::Expire(Clock::time_point now, WireMads& wire,
                        std::vector<OutstandingSend>& expired) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    Transfer& t = *it;
    if (t.deadline > now) {
      ++it;
      continue;
    }
    if (!t.acked && t.retries_left > 0) {
      // ib_retry_rmpp(): the window again, from the first segment not acknowledged.
      --t.retries_left;
      t.last_sent = t.last_ack;
      SendWindow(t, now, wire);
      t.deadline = now + t.ack_timeout;
      ++it;
      continue;
    }
    OutstandingSend s;
    s.agent_id = t.agent_id;
    s.tid = t.tid;
    s.mgmt_class = t.mgmt_class;
    s.umad = std::move(t.umad);
    expired.push_back(std::move(s));
    it = sends_.erase(it);
  }
}

void RmppSender::DropAgent(uint32_t agent_id) {
  sends_.remove_if([&](const Transfer& t) { return t.agent_id == agent_id; });
}

std::optional<Clock::time_point> RmppSender::NextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& t : sends_)
    if (!next || t.deadline < *next) next = t.deadline;
  return next;
}

}  // namespace ibemu::umad
