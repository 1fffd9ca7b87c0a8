#include "emulator/engine/event_queue.h"

namespace ibemu::engine {

// A 4-ary heap: half the depth of a binary heap, and the four children of a node share a cache
// line or two, which matters more than the extra comparisons.
namespace {
constexpr size_t kArity = 4;
}

void EventQueue::Push(const Event& e) {
  heap_.push_back(e);
  size_t i = heap_.size() - 1;
  while (i > 0) {
    size_t p = (i - 1) / kArity;
    if (!EventBefore(e, heap_[p])) break;
    heap_[i] = heap_[p];
    i = p;
  }
  heap_[i] = e;
}

Event EventQueue::Pop() {
  Event top = heap_.front();
  Event last = heap_.back();
  heap_.pop_back();
  size_t n = heap_.size();
  if (n == 0) return top;
  size_t i = 0;
  for (;;) {
    size_t first = kArity * i + 1;
    if (first >= n) break;
    size_t end = first + kArity < n ? first + kArity : n;
    size_t c = first;
    for (size_t k = first + 1; k < end; ++k)
      if (EventBefore(heap_[k], heap_[c])) c = k;
    if (!EventBefore(heap_[c], last)) break;
    heap_[i] = heap_[c];
    i = c;
  }
  heap_[i] = last;
  return top;
}

}  // namespace ibemu::engine
