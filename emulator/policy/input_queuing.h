// How a port's receive buffer for one VL is divided into queues, and into credit classes.
//
// Standard IB has one credit pool per VL. Single-queue (FIFO) and VOQsw (a queue per output port)
// both keep that: they only change which packet may leave first. VOQnet, the papers' theoretical
// reference, reserves buffer space per destination; its upstream must then account credits per
// destination too, which is an extension beyond IB (see docs/architecture.md): a credit class.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "common/policy/registry.h"

namespace ibemu::engine {
struct Packet;
}

namespace ibemu::policy {

struct QueuingContext {
  int num_ports = 0;         // ports of the device that owns the buffer (queue per output)
  int max_switch_ports = 0;  // the most ports of any switch in the fabric
  int num_destinations = 0;  // endpoint LIDs in the fabric (queue per destination)
  uint32_t vl_capacity_blocks = 0;
};

class InputQueuing {
 public:
  virtual ~InputQueuing() = default;
  virtual int NumQueues(const QueuingContext& c) const = 0;
  // Queue for a packet already routed to `out_port`.
  virtual int Queue(const engine::Packet& p, int out_port, int dest_index) const = 0;
  // Credit classes per VL; one class is standard IB. Each class gets the VL's whole configured
  // capacity: VOQnet's reference is ideal, so its per-destination space is not carved out of it.
  virtual int NumCreditClasses(const QueuingContext& c) const { return 1; }
  virtual int CreditClass(int dest_index) const { return 0; }
  // Whether the queue is the packet's output port (Queue returns out_port): a queue's packets
  // then all request the same output.
  virtual bool QueuePerOutput() const { return false; }
  // Look-ahead classes: a packet's class on a link is the queue it takes at the receiving
  // switch, its output port there (the papers' VOQsw, with credits per queue); the sender reads
  // the receiver's forwarding table (link::FabricContext::next_output). CreditClass is unused.
  virtual bool LooksAhead() const { return false; }
  // Blocks one credit class may hold, of a VL's `vl_blocks`, at a device with `switch_ports`
  // ports (0: a channel adapter): the whole VL (VOQnet's ideal reference) or a static share.
  virtual uint32_t ClassCapacity(uint32_t vl_blocks, int switch_ports) const { return vl_blocks; }
};

using InputQueuingRegistry = Registry<InputQueuing>;

}  // namespace ibemu::policy
