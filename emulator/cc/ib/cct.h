// A Congestion Control Table entry as a time (IBA A10): CCT_Shift (2 bits) and CCT_Multiplier
// (14 bits) on a base time, (base >> shift) * multiplier. The CA's inter-packet delay and the
// switch's CS_ReturnDelay are both written this way.
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"

namespace ibemu::cc::ib {

inline link::SimTime CctDelay(uint16_t entry, link::SimTime base) {
  return (base >> (entry >> 14)) * (entry & 0x3FFF);
}

}  // namespace ibemu::cc::ib
