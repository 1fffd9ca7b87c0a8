#include "emulator/cc/dbbm/header_queues.h"

#include "emulator/cc/dbbm/queue_map.h"

namespace ibemu::cc::dbbm {

int HeaderQueues::OutputVl(SwitchView&, int, int, Packet& p, int) {
  bool congested = opt_.dynamic && (p.bth().resv6a() & kCbInResv6a);
  return QueueOf(p.lrh().dlid(), congested, opt_.queues);
}

}  // namespace ibemu::cc::dbbm
