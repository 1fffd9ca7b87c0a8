// 4-ary min-heap of events, hand-written so that events are moved, not copied through
// std::priority_queue's const top().
#pragma once
#include <vector>

#include "emulator/engine/event.h"

namespace ibemu::engine {

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }
  void Push(const Event& e);
  Event Pop();

 private:
  std::vector<Event> heap_;
};

}  // namespace ibemu::engine
