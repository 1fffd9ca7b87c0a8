// A discrete event. Events are ordered by (time, target LP, source LP, source sequence): every key
// is independent of how LPs are spread over partitions, which is what makes one process, N
// partitions and one process per device produce the same per-LP event order.
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"

namespace ibemu::engine {

using LpId = uint32_t;

// Kinds that cross links, and so processes, are fixed here; devices define their own local kinds
// from kFirstLocalKind upward.
enum EventKind : uint16_t {
  kPacketArrive = 1,       // head of `pkt` arrives on `port`; b = tail arrival time
  kFlowControlArrive = 2,  // FC packet on `port`; a = vl | class << 8; b = fctbs | fccl << 32
  kLinkStateArrive = 3,    // the peer of `port` changed its link: a = enabled | retrain << 1
  kControlArrive = 4,      // a congestion-control message from the peer of `port`: a, b its own
  kSideBandArrive = 5,     // a side-band message, device to side band or back: a, b its own
  kFirstLocalKind = 16,
};

struct Event {
  SimTime time = 0;
  // src before lp: EventBefore compares (lp, src) as one word, which on a little-endian machine
  // is one load of the two.
  LpId src = 0;
  LpId lp = 0;
  uint64_t seq = 0;
  uint16_t kind = 0;
  uint16_t port = 0;
  uint32_t a = 0;
  uint64_t b = 0;
  Packet* pkt = nullptr;
};

inline bool EventBefore(const Event& x, const Event& y) {
  if (x.time != y.time) return x.time < y.time;
  uint64_t xl = uint64_t{x.lp} << 32 | x.src, yl = uint64_t{y.lp} << 32 | y.src;
  if (xl != yl) return xl < yl;
  return x.seq < y.seq;
}

}  // namespace ibemu::engine
