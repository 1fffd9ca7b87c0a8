// DBBM's modulo mapping and DDBBM's dynamic queue [D:L45, D:L63, D:L99]: the one function both
// forms apply, at the source (IB: as the SL) or at every switch (paper: from the header).
#pragma once
#include <cstdint>

namespace ibemu::cc::dbbm {

inline int QueueOf(uint16_t dlid, bool congested, int queues) {
  return congested ? queues : dlid % queues;
}

}  // namespace ibemu::cc::dbbm
