// The sending side of RMPP (IBA 13.6.3) for the agents of one umad file, as the kernel's ib_mad
// does it for agents registered with rmpp_version 1 (mad_rmpp.c: send_next_seg,
// process_rmpp_ack, ib_retry_rmpp). A message written with the RMPP Active flag is cut into
// DATA segments that each repeat the MAD's header up to the class data; the first goes out
// alone (the receiver's window starts at 1), later ones as far as the receiver's ACKs open the
// window. Without progress for the ACK timeout (the send's timeout_ms, at most 2 s; 2 s when it
// is 0) the window is sent again from the last acknowledged segment, `retries` times; then the
// send comes back to the application with status ETIMEDOUT. The last ACK completes a send
// without timeout_ms (a response); a request then waits timeout_ms for its response. A STOP or
// ABORT from the receiver ends the send without a report, as ib_umad reports only timeouts.
#pragma once
#include <infiniband/umad.h>

#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

#include "hostlib/umad/rmpp_header.h"
#include "hostlib/umad/send_tracker.h"

namespace ibemu::umad {

class RmppSender {
 public:
  // mad_rmpp.c: "2 seconds for an ACK until we can find the packet lifetime".
  static constexpr std::chrono::milliseconds kMaxAckTimeout{2000};

  // `umad` is the application's struct ib_user_mad followed by the MAD it wrote (at least the
  // class's data offset long), TID already stamped. `await_response`: a request, which the
  // response completes after the last ACK. Appends the first segment to `wire`. -EINVAL when
  // the same TID and class are already being sent to the same LID (ib_umad's is_duplicate).
  int Start(uint32_t agent_id, uint8_t rmpp_version, std::vector<uint8_t> umad, int timeout_ms,
            int retries, bool await_response, Clock::time_point now, WireMads& wire);

  // An ACK from `from` (struct ib_user_mad address of the received MAD). Returns 0, or the
  // RMPP status of an ABORT the caller sends back (the send is then over).
  uint8_t OnAck(uint32_t agent_id, const uint8_t* mad, const ib_mad_addr_t& from,
                Clock::time_point now, WireMads& wire);
  // STOP or ABORT from the receiver, or a protocol error: the send ends unreported.
  void Abort(uint32_t agent_id, const uint8_t* mad, const ib_mad_addr_t& from);
  // A response to an RMPP request completes it.
  bool CompleteResponse(uint32_t agent_id, uint64_t tid, uint8_t mgmt_class);

  // Resends windows whose ACK is late and moves sends out of retries (or whose response never
  // came) to `expired`, with their header and MAD as the application wrote them.
  void Expire(Clock::time_point now, WireMads& wire, std::vector<OutstandingSend>& expired);
  void DropAgent(uint32_t agent_id);
  std::optional<Clock::time_point> NextDeadline() const;
  size_t size() const { return sends_.size(); }

 private:
  struct Transfer {
    uint32_t agent_id = 0;
    uint64_t tid = 0;
    uint8_t mgmt_class = 0;
    uint16_t dlid = 0;          // host order
    std::vector<uint8_t> umad;  // as written: struct ib_user_mad + MAD
    size_t hdr_len = 0;         // bytes every segment repeats
    size_t seg_size = 0;        // data bytes per segment
    uint32_t data_len = 0;
    uint32_t pad = 0;  // zeros after the data in the last segment
    uint32_t seg_count = 0;
    uint8_t rmpp_version = kRmppVersion;
    uint32_t last_sent = 0;  // highest segment number sent since the last retransmission
    uint32_t last_ack = 0;
    uint32_t newwin = 1;  // highest segment the receiver accepts
    int max_retries = 0;
    int retries_left = 0;
    std::chrono::milliseconds timeout{0};      // the application's: waiting for the response
    std::chrono::milliseconds ack_timeout{0};  // waiting for an ACK
    bool await_response = false;               // a request: the response completes it
    bool acked = false;                        // every segment acknowledged
    Clock::time_point deadline;
  };

  std::vector<uint8_t> Segment(const Transfer& t, uint32_t seg) const;
  // Sends the segments the window allows that have not been sent; restarts the ACK timer when
  // it sent any. Returns how many.
  size_t SendWindow(Transfer& t, Clock::time_point now, WireMads& wire);
  std::list<Transfer>::iterator Find(uint32_t agent_id, const uint8_t* mad,
                                     const ib_mad_addr_t& from);

  std::list<Transfer> sends_;
};

}  // namespace ibemu::umad
