#include "emulator/engine/logical_process.h"

#include "emulator/engine/partition.h"

namespace ibemu::engine {

SimTime LogicalProcess::now() const {
  return part_->now();
}

void LogicalProcess::Post(LpId target, SimTime t, uint16_t kind, uint16_t port, uint32_t a,
                          uint64_t b, Packet* pkt) {
  Event e;
  e.time = t;
  e.lp = target;
  e.src = id_;
  e.seq = seq_++;
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

void LogicalProcess::Account(const Event& e) {
  ++events_;
  digest_.Add(static_cast<uint64_t>(e.time));
  digest_.Add(uint64_t{e.kind} << 48 | uint64_t{e.port} << 32 | e.a);
  digest_.Add(e.b);
  if (e.pkt) {
    digest_.Add(e.pkt->id);
    uint64_t h = 0;
    for (int i = 0; i < 8; ++i) h = h << 8 | e.pkt->hdr[i];  // LRH: VL, SL, DLID, SLID
    digest_.Add(h);
  }
}

}  // namespace ibemu::engine
