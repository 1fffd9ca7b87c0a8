// The receiving side of RMPP (IBA 13.6.4) for the agents of one umad file, as the kernel's ib_mad
// does it for agents registered with rmpp_version 1 (mad_rmpp.c: start_rmpp, continue_rmpp,
// complete_rmpp). DATA segments of one message (same agent, TID, source LID and QP, class,
// version and method) are collected in order; duplicates and segments beyond the window are
// dropped, a segment already acknowledged draws the last ACK again. The receiver ACKs the first
// segment (opening a window of 64 more), each time the window fills, and the last segment.
// The complete message is what ib_umad hands to read(): the first segment whole, then the data
// part of every further segment, cut to the length the last segment's PayloadLength gives
// (class data offset + segments * data per segment - padding). A single-segment message
// (First and Last) is thereby cut to its PayloadLength, not delivered as 256 bytes.
// A message not complete 40 s after its first segment is abandoned with ABORT (T2L); a
// complete one is remembered 10 s so that a repeated last segment is ACKed again.
#pragma once
#include <infiniband/umad.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <optional>
#include <vector>

#include "hostlib/umad/rmpp_header.h"
#include "hostlib/umad/send_tracker.h"

namespace ibemu::umad {

class RmppReceiver {
 public:
  // window_size() of ib_mad: the receive queue (512) / 8.
  static constexpr uint32_t kWindow = 64;
  static constexpr std::chrono::seconds kAssemblyTimeout{40};
  static constexpr std::chrono::seconds kLinger{10};

  // A DATA segment (one MAD, kMadBytes long) for `agent_id`, from `from`. ACKs and ABORTs go to
  // `wire`. Returns the whole message once its last segment is in.
  std::optional<std::vector<uint8_t>> OnData(uint32_t agent_id, const uint8_t* mad,
                                             const ib_mad_addr_t& from, Clock::time_point now,
                                             WireMads& wire);

  // Abandons messages past their time (ABORT T2L to the sender) and forgets finished ones.
  void Expire(Clock::time_point now, WireMads& wire);
  void DropAgent(uint32_t agent_id);
  std::optional<Clock::time_point> NextDeadline() const;
  size_t size() const { return recvs_.size(); }

 private:
  struct Assembly {
    uint32_t agent_id = 0;
    uint64_t tid = 0;
    uint32_t src_qp = 0;
    uint16_t slid = 0;
    uint8_t mgmt_class = 0;
    uint8_t class_version = 0;
    uint8_t method = 0;
    ib_mad_addr_t from{};                               // of the first segment: where ACKs go
    std::map<uint32_t, std::vector<uint8_t>> segments;  // by segment number, whole MADs
    std::vector<uint8_t> first;                         // the first segment (ACK and ABORT header)
    uint32_t seg_num = 1;  // highest segment received with all before it
    uint32_t newwin = 1;
    uint32_t last_ack = 0;
    bool complete = false;
    Clock::time_point deadline;
  };

  std::list<Assembly>::iterator Find(uint32_t agent_id, const uint8_t* mad,
                                     const ib_mad_addr_t& from);
  std::optional<std::vector<uint8_t>> Start(uint32_t agent_id, const uint8_t* mad,
                                            const ib_mad_addr_t& from, Clock::time_point now,
                                            WireMads& wire);
  std::optional<std::vector<uint8_t>> Continue(std::list<Assembly>::iterator it, const uint8_t* mad,
                                               Clock::time_point now, WireMads& wire);
  std::vector<uint8_t> Complete(Assembly& a, const uint8_t* mad, Clock::time_point now,
                                WireMads& wire);
  void Ack(Assembly& a, const uint8_t* mad, WireMads& wire);

  std::list<Assembly> recvs_;
};

}  // namespace ibemu::umad
