#include "emulator/engine/packet.h"
#include "emulator/policy/builtin.h"
#include "emulator/policy/input_queuing.h"

namespace ibemu::policy {
namespace {

// One FIFO per VL: low-order HoL blocking inside the switch, as in Fig. 2.6 of the thesis.
class SingleQueue : public InputQueuing {
 public:
  int NumQueues(const QueuingContext&) const override { return 1; }
  int Queue(const engine::Packet&, int, int) const override { return 0; }
};

// VOQsw: a queue per output port; removes low-order HoL blocking only. The thesis calls it the
// usual internal queuing of IB switches, so it is the default.
class VoqSwitch : public InputQueuing {
 public:
  int NumQueues(const QueuingContext& c) const override { return c.num_ports + 1; }
  int Queue(const engine::Packet&, int out_port, int) const override { return out_port; }
  bool QueuePerOutput() const override { return true; }
};

// VOQnet: a queue and a reserved share of the buffer per destination, in every port; removes
// high-order HoL blocking too, and does not scale. The papers' theoretical reference.
class VoqNet : public InputQueuing {
 public:
  int NumQueues(const QueuingContext& c) const override { return c.num_destinations; }
  int Queue(const engine::Packet&, int, int dest) const override { return dest; }
  int NumCreditClasses(const QueuingContext& c) const override { return c.num_destinations; }
  int CreditClass(int dest) const override { return dest; }
};

// VOQsw as Nachiondo et al. and the thesis's Paper V model it: the input buffer divided
// statically among the output ports, each share with its own credits, so a full queue toward a
// congested output leaves the others their room. The credits count the receiver's queues, so
// the sender looks ahead at the next switch's route; standard IB counts one pool per VL (the
// default queuing.voqsw, whose queues share the VL's buffer).
class VoqSwitchStatic : public InputQueuing {
 public:
  int NumQueues(const QueuingContext& c) const override { return c.num_ports + 1; }
  int Queue(const engine::Packet&, int out_port, int) const override { return out_port; }
  bool QueuePerOutput() const override { return true; }
  int NumCreditClasses(const QueuingContext& c) const override { return c.max_switch_ports + 1; }
  bool LooksAhead() const override { return true; }
  uint32_t ClassCapacity(uint32_t vl_blocks, int switch_ports) const override {
    return switch_ports > 0 ? vl_blocks / static_cast<uint32_t>(switch_ports) : vl_blocks;
  }
};

}  // namespace

void RegisterInputQueuings() {
  auto& r = InputQueuingRegistry::Get();
  r.Add("queuing.single", "one FIFO per input VL (low- and high-order HoL blocking)",
        [] { return std::make_unique<SingleQueue>(); });
  r.Add("queuing.voqsw", "virtual output queues per input VL (default; no low-order HoL)",
        [] { return std::make_unique<VoqSwitch>(); });
  r.Add("queuing.voqnet",
        "a queue, a whole VL buffer and credits per destination (no HoL at all; not IB)",
        [] { return std::make_unique<VoqNet>(); });
  r.Add("queuing.voqsw-static",
        "virtual output queues with the VL buffer divided among them and credits per queue "
        "(look-ahead; the papers' VOQsw, not IB)",
        [] { return std::make_unique<VoqSwitchStatic>(); });
}

}  // namespace ibemu::policy
