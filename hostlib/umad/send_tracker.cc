#include "hostlib/umad/send_tracker.h"

#include <algorithm>
#include <utility>

namespace ibemu::umad {

bool SendTracker::Complete(uint32_t agent_id, uint64_t tid, uint8_t mgmt_class) {
  auto it = std::find_if(sends_.begin(), sends_.end(), [&](const OutstandingSend& s) {
    return s.agent_id == agent_id && s.tid == tid && s.mgmt_class == mgmt_class;
  });
  if (it == sends_.end()) return false;
  if (done_.size() < kKeepDone)
    done_.splice(done_.begin(), sends_, it);
  else
    sends_.erase(it);
  return true;
}

void SendTracker::Expire(Clock::time_point now, std::vector<const OutstandingSend*>& resend,
                         std::vector<OutstandingSend>& expired) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (it->deadline > now) {
      ++it;
      continue;
    }
    if (it->retries_left > 0) {
      --it->retries_left;
      it->deadline = now + it->timeout;
      resend.push_back(&*it);
      ++it;
    } else {
      expired.push_back(std::move(*it));
      it = sends_.erase(it);
    }
  }
}

void SendTracker::DropAgent(uint32_t agent_id) {
  sends_.remove_if([&](const OutstandingSend& s) { return s.agent_id == agent_id; });
}

std::optional<Clock::time_point> SendTracker::NextDeadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& s : sends_)
    if (!next || s.deadline < *next) next = s.deadline;
  return next;
}

}  // namespace ibemu::umad
