#include "emulator/engine/packet.h"

namespace ibemu::engine {

PacketPool::~PacketPool() = default;

Packet* PacketPool::Get() {
  ++live_;
  if (!free_) {
    constexpr size_t kSlab = 1024;
    slabs_.push_back(std::make_unique<Packet[]>(kSlab));
    Packet* s = slabs_.back().get();
    for (size_t i = 0; i < kSlab; ++i) {
      s[i].next = free_;
      free_ = &s[i];
    }
  }
  Packet* p = free_;
  free_ = p->next;
  *p = Packet{};
  return p;
}

void PacketPool::Put(Packet* p) {
  --live_;
  p->next = free_;
  free_ = p;
}

}  // namespace ibemu::engine
