// Outstanding requests of one umad file: the kernel's MAD send timeout and retry machinery
// (ib_mad wait_list, timeout_sends, ib_retry_send). A request sent with timeout_ms > 0 waits here
// for its response; at each timeout it is sent again while retries remain, and after the last
// attempt it is handed back to the sender with status ETIMEDOUT. The total wait is therefore
// timeout_ms * (retries + 1), exactly as with ib_umad.
#pragma once
#include <chrono>
#include <cstdint>
#include <list>
#include <optional>
#include <vector>

namespace ibemu::umad {

using Clock = std::chrono::steady_clock;

struct OutstandingSend {
  uint32_t agent_id = 0;
  uint64_t tid = 0;  // as sent, hi_tid included
  uint8_t mgmt_class = 0;
  std::vector<uint8_t> umad;  // struct ib_user_mad header followed by the MAD as sent
  std::chrono::milliseconds timeout{0};
  int retries_left = 0;
  Clock::time_point deadline;
};

class SendTracker {
 public:
  // Adds a request, each of whose fields `fill` writes, in the node and MAD buffer of one that
  // finished when there is one (a MAD sent then costs no allocation). If `fill` throws, nothing
  // is added.
  template <typename Fill>
  void Add(Fill&& fill) {
    std::list<OutstandingSend> one;
    if (done_.empty())
      one.emplace_back();
    else
      one.splice(one.begin(), done_, done_.begin());
    fill(one.front());
    sends_.splice(sends_.end(), one);
  }

  // ib_find_send_mad(): a response completes the outstanding request of `agent_id` with the same
  // TID and class. Returns false when there is none (a late or stray response: dropped).
  bool Complete(uint32_t agent_id, uint64_t tid, uint8_t mgmt_class);

  // Moves every request whose deadline has passed either to `resend` (a retry is left; its
  // deadline restarts from `now`) or to `expired` (no retry left; it is no longer tracked).
  void Expire(Clock::time_point now, std::vector<const OutstandingSend*>& resend,
              std::vector<OutstandingSend>& expired);

  // Unregistering an agent cancels its requests without reporting them (IB_WC_WR_FLUSH_ERR).
  void DropAgent(uint32_t agent_id);

  std::optional<Clock::time_point> NextDeadline() const;
  size_t size() const { return sends_.size(); }

 private:
  std::list<OutstandingSend> sends_;  // stable addresses for the resend pointers
  std::list<OutstandingSend> done_;   // answered, kept for Add (at most kKeepDone)
  static constexpr size_t kKeepDone = 64;
};

}  // namespace ibemu::umad
