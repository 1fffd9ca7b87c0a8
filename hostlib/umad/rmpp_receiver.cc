#include "hostlib/umad/rmpp_receiver.h"

#include <endian.h>

#include <algorithm>
#include <cstring>

#include "common/mad/mad_header.h"
#include "hostlib/umad/rmpp_header.h"

namespace ibemu::umad {

using mad::ConstMadView;
using mad::kMadBytes;

namespace {

std::vector<uint8_t> Abort(const uint8_t* mad, const ib_mad_addr_t& to, uint8_t status) {
  RmppHeader h;
  h.version = kRmppVersion;
  h.type = kRmppAbort;
  h.flags = kRmppActive;
  h.status = status;
  return RmppReply(mad, to, h);
}

size_t HeaderLength(uint8_t mgmt_class) {
  return std::max(MadDataOffset(mgmt_class), kRmppHeaderEnd);
}

}  // namespace

std::list<RmppReceiver::Assembly>::iterator RmppReceiver::Find(uint32_t agent_id,
                                                               const uint8_t* mad,
                                                               const ib_mad_addr_t& from) {
  const ConstMadView view{mad};
  const uint32_t src_qp = be32toh(from.qpn) & 0xFFFFFF;
  const uint16_t slid = be16toh(from.lid);
  return std::find_if(recvs_.begin(), recvs_.end(), [&](const Assembly& a) {
    return a.agent_id == agent_id && a.tid == view.tid() && a.src_qp == src_qp && a.slid == slid &&
           a.mgmt_class == view.mgmt_class() && a.class_version == view.class_version() &&
           a.method == view.method();
  });
}

std::optional<std::vector<uint8_t>> RmppReceiver::OnData(uint32_t agent_id, const uint8_t* mad,
                                                         const ib_mad_addr_t& from,
                                                         Clock::time_point now, WireMads& wire) {
  const RmppHeader h = RmppHeader::Read(mad);
  if (h.status != 0) {
    wire.push_back(Abort(mad, from, rmpp_status::kBadStatus));
    return std::nullopt;
  }
  // Segment 1 and only segment 1 carries First.
  if ((h.seg_num == 1) != h.first()) {
    wire.push_back(Abort(mad, from, rmpp_status::kBadSeg));
    return std::nullopt;
  }
  if (h.seg_num == 1) return Start(agent_id, mad, from, now, wire);
  auto it = Find(agent_id, mad, from);
  if (it == recvs_.end()) return std::nullopt;  // no first segment: dropped
  return Continue(it, mad, now, wire);
}

std::optional<std::vector<uint8_t>> RmppReceiver::Start(uint32_t agent_id, const uint8_t* mad,
                                                        const ib_mad_addr_t& from,
                                                        Clock::time_point now, WireMads& wire) {
  if (auto it = Find(agent_id, mad, from); it != recvs_.end()) return Continue(it, mad, now, wire);
  const ConstMadView view{mad};
  Assembly a;
  a.agent_id = agent_id;
  a.tid = view.tid();
  a.src_qp = be32toh(from.qpn) & 0xFFFFFF;
  a.slid = be16toh(from.lid);
  a.mgmt_class = view.mgmt_class();
  a.class_version = view.class_version();
  a.method = view.method();
  a.from = from;
  a.first.assign(mad, mad + kMadBytes);
  a.segments[1] = a.first;
  recvs_.push_back(std::move(a));
  Assembly& r = recvs_.back();
  if (RmppHeader::Read(mad).last()) {
    r.complete = true;
    return Complete(r, mad, now, wire);
  }
  r.deadline = now + kAssemblyTimeout;
  r.newwin += kWindow;
  Ack(r, mad, wire);
  return std::nullopt;
}

std::optional<std::vector<uint8_t>> RmppReceiver::Continue(std::list<Assembly>::iterator it,
                                                           const uint8_t* mad,
                                                           Clock::time_point now, WireMads& wire) {
  Assembly& a = *it;
  const uint32_t seg = RmppHeader::Read(mad).seg_num;
  if (seg > a.newwin) return std::nullopt;  // beyond the window: dropped
  if (seg <= a.last_ack || a.complete) {
    Ack(a, mad, wire);  // the sender missed an ACK
    return std::nullopt;
  }
  if (a.segments.count(seg)) return std::nullopt;  // a duplicate
  a.segments[seg].assign(mad, mad + kMadBytes);
  if (seg != a.seg_num + 1) return std::nullopt;  // held until the gap is filled
  while (a.segments.count(a.seg_num + 1)) ++a.seg_num;
  if (RmppHeader::Read(a.segments[a.seg_num].data()).last()) {
    a.complete = true;
    return Complete(a, mad, now, wire);
  }
  if (a.seg_num == a.newwin) {
    a.newwin += kWindow;
    Ack(a, mad, wire);
  }
  return std::nullopt;
}

// complete_rmpp() and ib_umad's copy_recv_mad(): the first segment, then each further segment's
// data, as long as get_mad_len() says.
std::vector<uint8_t> RmppReceiver::Complete(Assembly& a, const uint8_t* mad, Clock::time_point now,
                                            WireMads& wire) {
  Ack(a, mad, wire);
  const size_t hdr_len = HeaderLength(a.mgmt_class);
  const size_t seg_size = kMadBytes - hdr_len;
  const int64_t paylen = RmppHeader::Read(a.segments[a.seg_num].data()).paylen_newwin;
  int64_t pad = int64_t{kRmppSegmentPayload} - paylen;
  if (pad < 0 || pad > int64_t{kRmppSegmentPayload}) pad = 0;

  std::vector<uint8_t> msg = std::move(a.segments[1]);
  msg.reserve(kMadBytes + (a.seg_num - 1) * seg_size);
  for (uint32_t i = 2; i <= a.seg_num; ++i) {
    const std::vector<uint8_t>& s = a.segments[i];
    msg.insert(msg.end(), s.begin() + static_cast<std::ptrdiff_t>(hdr_len), s.end());
  }
  const int64_t len = static_cast<int64_t>(hdr_len + a.seg_num * seg_size) - pad;
  msg.resize(static_cast<size_t>(std::max<int64_t>(len, 0)));
  a.segments.clear();
  a.deadline = now + kLinger;
  return msg;
}

// format_ack(): the received segment's header, method with the R bit flipped, ACK with the
// highest segment received in order and the window's last segment, to the first segment's
// source.
void RmppReceiver::Ack(Assembly& a, const uint8_t* mad, WireMads& wire) {
  const RmppHeader data = RmppHeader::Read(mad);
  RmppHeader h;
  h.version = data.version;
  h.type = kRmppAck;
  h.flags = kRmppActive;
  h.status = data.status;
  h.seg_num = a.seg_num;
  h.paylen_newwin = a.newwin;
  a.last_ack = a.seg_num;
  wire.push_back(RmppReply(mad, a.from, h));
}

void RmppReceiver::Expire(Clock::time_point now, WireMads& wire) {
  for (auto it = recvs_.begin(); it != recvs_.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    if (!it->complete) wire.push_back(Abort(it->first.data(), it->from, rmpp_status::kT2L));
    it = recvs_.erase(it);
  }
}

void RmppReceiver::DropAgent(uint32_t agent_id) {
  recvs_.remove_if([&](const Assembly& a) { return a.agent_id == agent_id; });
}

std::optional<Clock::time_point> RmppReceiver::NextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& a : recvs_)
    if (!next || a.deadline < *next) next = a.deadline;
  return next;
}

}  // namespace ibemu::umad
