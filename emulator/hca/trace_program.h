// A replayed application (docs/traces.md): each rank's operations in program order, and where
// each rank runs. Ranks run at their HCAs and wait on one another only through the messages
// they exchange, so a replay needs nothing outside the HCAs and partitions like any traffic.
#pragma once
#include <cstdint>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::hca {

struct TraceOp {
  enum Kind : uint8_t {
    kCompute,  // value: ps the rank is busy before its next operation
    kSend,     // value: bytes to rank `peer`; the rank goes on at once (an eager MPI_Isend)
    kRecv,     // value: bytes; waits until the next message from rank `peer` has arrived whole
  };
  Kind kind = kCompute;
  uint32_t peer = 0;
  uint64_t value = 0;
};

struct TraceProgram {
  std::vector<std::vector<TraceOp>> ranks;  // [rank]
  std::vector<uint16_t> lid;                // [rank]: the LID its HCA port has at load
};

}  // namespace ibemu::hca
