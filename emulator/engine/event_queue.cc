#include "emulator/engine/event_queue.h"

namespace ibemu::engine {

void EventQueue::Push(const Event& e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    size_t p = (i - 1) / 2;
    if (!EventBefore(heap_[i], heap_[p])) break;
    std::swap(heap_[i], heap_[p]);
    i = p;
  }
}

Event EventQueue::Pop() {
  Event top = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t l = 2 * i + 1;
    if (l >= n) break;
    size_t c = (l + 1 < n && EventBefore(heap_[l + 1], heap_[l])) ? l + 1 : l;
    if (!EventBefore(heap_[c], last)) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = last;
  return top;
}

}  // namespace ibemu::engine
