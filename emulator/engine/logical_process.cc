#include "emulator/engine/logical_process.h"

#include "emulator/engine/partition.h"

namespace ibemu::engine {

void LogicalProcess::Post(LpId target, SimTime t, uint16_t kind, uint16_t port, uint32_t a,
                          uint64_t b, Packet* pkt) {
  PostReserved(seq_++, target, t, kind, port, a, b, pkt);
}

void LogicalProcess::PostReserved(uint64_t seq, LpId target, SimTime t, uint16_t kind,
                                  uint16_t port, uint32_t a, uint64_t b, Packet* pkt) {
  if (target == id_) ++self_posts_;
  Event e;
  e.time = t;
  e.lp = target;
  e.src = id_;
  e.seq = seq;
  e.kind = kind;
  e.port = port;
  e.a = a;
  e.b = b;
  e.pkt = pkt;
  part_->Schedule(e);
}

Packet* LogicalProcess::NewPacket() {
  return part_->pool().Get();
}
void LogicalProcess::FreePacket(Packet* p) {
  part_->pool().Put(p);
}

}  // namespace ibemu::engine
