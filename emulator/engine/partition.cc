#include "emulator/engine/partition.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace ibemu::engine {

void Partition::Add(LogicalProcess* lp) {
  if (lp->id() >= lps_.size()) lps_.resize(lp->id() + 1, nullptr);
  lps_[lp->id()] = lp;
  lp->Attach(this, &now_);
}

void Partition::ThrowPast(const Event& e) const {
  throw std::logic_error("event scheduled in the past: kind " + std::to_string(e.kind) + " at " +
                         std::to_string(e.time) + " < now " + std::to_string(now_));
}

void Partition::SendRemote(const Event& e) {
  if (!remote_) throw std::logic_error("event for LP " + std::to_string(e.lp) + " has no owner");
  remote_->Send(e);
  if (e.pkt) pool_.Put(e.pkt);
}

SimTime Partition::NextEventTime() const {
  return queue_.empty() ? INT64_MAX : queue_.top_time();
}

void Partition::StartAll() {
  for (LogicalProcess* lp : lps_)
    if (lp) lp->Start();
}

void Partition::HandleNext() {
  Event e = queue_.Pop();
  now_ = e.time;
  LogicalProcess* lp = lps_[e.lp];
  if (lp->event_hooks()) [[unlikely]]
    lp->BeforeEvent(e);
  lp->Account(e);
  lp->Handle(e);
  if (lp->event_hooks()) [[unlikely]]
    lp->AfterEvent();
  ++events_;
}

bool Partition::RunSome(SimTime end, uint64_t max_events) {
  for (uint64_t n = 0; n < max_events; ++n) {
    if (queue_.empty() || queue_.top_time() >= end) {
      if (end > now_) now_ = end;
      return true;
    }
    HandleNext();
  }
  return false;
}

void Partition::RunUntil(SimTime end) {
  while (!queue_.empty() && queue_.top_time() < end) HandleNext();
  if (end > now_) now_ = end;
}

}  // namespace ibemu::engine
