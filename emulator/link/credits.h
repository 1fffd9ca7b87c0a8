// Credit accounting of IBA 7.9.4 in its own arithmetic: 64-byte blocks and 12-bit wrapping
// counters (FCTBS, FCCL, ABR), so the values on the wire are the values a real port would send.
#pragma once
#include <cstdint>

#include "common/wire/flow_control_packet.h"

namespace ibemu::link {

// What a transmitter knows of the receive buffer at the other end of its link, for one VL.
struct TxCredits {
  uint64_t blocks_sent = 0;  // FCTBS is this modulo 4096
  uint16_t fccl = 0;         // the last credit limit the receiver advertised

  uint16_t fctbs() const { return static_cast<uint16_t>(blocks_sent & wire::kFcCounterMask); }
  // IBA 7.9.4.2: may send if (FCCL - CR) mod 4096 <= 2048, CR = (FCTBS + blocks) mod 4096.
  bool Fits(uint32_t blocks) const {
    uint16_t cr = static_cast<uint16_t>((blocks_sent + blocks) & wire::kFcCounterMask);
    return ((fccl - cr) & wire::kFcCounterMask) <= 2048;
  }
  // Blocks the receiver still has room for, as far as this side can tell.
  uint32_t Available() const {
    uint16_t d = static_cast<uint16_t>((fccl - fctbs()) & wire::kFcCounterMask);
    return d <= 2048 ? d : 0;
  }
};

// A receive buffer's accounting for one VL (and credit class).
struct RxCredits {
  uint32_t capacity = 0;  // blocks
  uint32_t used = 0;
  uint64_t abr = 0;  // adjusted blocks received
  uint32_t high_water = 0;
  bool fc_pending = false;

  // IBA 7.9.4.2: FCCL = ABR + free blocks, the free part capped at 2048 so the 12-bit window is
  // never ambiguous.
  uint16_t Fccl() const {
    uint32_t free = capacity > used ? capacity - used : 0;
    if (free > 2048) free = 2048;
    return static_cast<uint16_t>((abr + free) & wire::kFcCounterMask);
  }
};

}  // namespace ibemu::link
