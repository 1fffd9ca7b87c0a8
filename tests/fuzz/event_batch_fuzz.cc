// libFuzzer target: decoding of event batches received from another emulator process. A
// malformed batch must be refused (false), never read out of bounds or leak packets.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "emulator/engine/event_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ibemu::engine::PacketPool pool;
  std::vector<ibemu::engine::Event> events;
  ibemu::engine::Batch head;
  bool ok = ibemu::engine::DecodeBatch(data, size, &pool, &head, &events);
  if (ok && events.size() != head.count) __builtin_trap();
  for (auto& e : events)
    if (e.pkt) pool.Put(e.pkt);
  if (pool.live() != 0) __builtin_trap();
  return 0;
}
