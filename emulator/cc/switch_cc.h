// The switch's congestion-control hooks (docs/architecture.md §9): what a mechanism sees of a
// switch (SwitchView, implemented by the switch) and what it is told (SwitchCc, one stateful
// instance per switch, made by the mechanism with its parameters).
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"
#include "emulator/mgmt/cc_state.h"

namespace ibemu::cc {

using engine::Packet;
using SimTime = engine::SimTime;

class SwitchView {
 public:
  virtual ~SwitchView() = default;
  virtual SimTime Now() const = 0;
  virtual int NumPorts() const = 0;
  virtual int DataVls() const = 0;
  // Receive buffer capacity of one input VL, in 64-byte blocks.
  virtual uint32_t VlCapacityBlocks() const = 0;
  // Blocks queued at every input for the Port VL (out, vl): the switch has input buffers only, so
  // this is the output queue a mechanism reasons about.
  virtual uint32_t QueuedBlocks(int out, int vl) const = 0;
  // Of those, the blocks queued at input `in` (one virtual output queue).
  virtual uint32_t QueuedBlocksFrom(int in, int out, int vl) const = 0;
  // The same counts without the packet each input is still receiving (its tail has not arrived):
  // the buffer fill a switch that counts arrived data would see. A packet cutting through an idle
  // port is never counted.
  virtual uint32_t ArrivedBlocks(int out, int vl) const = 0;
  virtual uint32_t ArrivedBlocksFrom(int in, int out, int vl) const = 0;
  // Inputs with at least one block queued for (out, vl).
  virtual int ContributingInputs(int out, int vl) const = 0;
  // Blocks in use in the receive buffer of input (in, vl), whatever their output.
  virtual uint32_t InputUsedBlocks(int in, int vl) const = 0;
  // Whether a packet of (out, vl) waited for the peer's credits since (out, vl) last transmitted:
  // the Port VL is a victim of congestion further on, not its root.
  virtual bool CreditStarved(int out, int vl) const = 0;
  // A switch with output buffers (a CIOQ switch, SwitchConfig::output_buffer_blocks): their
  // capacity per Port VL, and the blocks in the buffer of (out, vl), counting a packet from the
  // crossbar's transfer into it until its tail has left on the link. QueuedBlocks and the other
  // counts above are of the input buffers only. A switch without output buffers: 0.
  virtual uint32_t OutputBufferCapacityBlocks() const { return 0; }
  virtual uint32_t OutputBufferBlocks(int out, int vl) const { return 0; }
  // Whether the device at the other end of `port` is a switch: a network channel, not a host's
  // injection or delivery channel.
  virtual bool PeerIsSwitch(int port) const { return false; }
  // Blocks the peer of `out` has room for on VL `vl`, as far as this switch's credits tell.
  virtual uint32_t PeerCreditBlocks(int out, int vl) const { return 0; }
  // The switch's Congestion Control Agent: the settings CC MADs write, and its logs.
  virtual mgmt::CcState& Cca() = 0;
  // Calls SwitchCc::OnTimer(a, b) at time t (>= Now()).
  virtual void PostTimer(SimTime t, uint32_t a, uint64_t b) = 0;
  // Sends (a, b) to the device at the other end of `port` (its SwitchCc or HcaCc::OnControl),
  // out of band: when a packet's head sent now would reach it (Device::SendControl).
  virtual void SendControl(int port, uint32_t a, uint64_t b) = 0;
  // H7: sends (a, b) to the side band (SideBandCc::OnReport); nothing if there is none.
  virtual void Report(uint32_t a, uint64_t b) = 0;
  // The time the link of `port` takes to send `bytes`.
  virtual SimTime SerializationTime(int port, uint32_t bytes) const = 0;
  // Blocks in queue q of input (in, vl), and the packets in it.
  virtual uint32_t QueueBlocks(int in, int vl, int q) const = 0;
  virtual uint32_t QueuePackets(int in, int vl, int q) const = 0;
  // The packet at the head of queue q of input (in, vl), or null.
  virtual const Packet* QueueHead(int in, int vl, int q) const { return nullptr; }
  // Arbitrates output `out` again now: a queue the mechanism held (PickQueue) may go.
  virtual void Kick(int out) {}
};

class SwitchCc {
 public:
  virtual ~SwitchCc() = default;
  // H2: a packet joined its queue at input (in, in_vl), routed to (out, out_vl). The queued
  // counts already include it. The mechanism may set header bits (a mark decided at the input
  // buffer, as MVCM's MB).
  virtual void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) {}
  // The packet has left its input queue (to be sent, or discarded); the counts exclude it.
  virtual void OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p) {}
  // H1: the packet is about to leave on (out, vl), after OnDequeue; the mechanism may set header
  // bits. The counts are what it leaves behind: a packet passing an idle port sees none.
  virtual void OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) {}
  virtual void OnTimer(SwitchView& s, uint32_t a, uint64_t b) {}
  // H2, the credit return: how much later than its read the blocks of a packet leaving input
  // (in, in_vl) for (out, out_vl) are freed and their credits returned upstream (0: at once).
  // Asked once per packet, after OnDequeue. Holding credits back throttles the upstream link:
  // IB CC's credit starvation (Control_Type 1).
  virtual SimTime CreditReturnDelay(SwitchView& s, int in, int in_vl, int out, int out_vl,
                                    const Packet& p) {
    return 0;
  }

  // The output VL of a packet routed to `out`, given the VL the SL2VL table gives (`vl`), when
  // ChoosesVls(): a queue chosen from the header at every hop (DDBBM's paper form). Asked once
  // per packet at forwarding.
  virtual bool ChoosesVls() const { return false; }
  virtual int OutputVl(SwitchView& s, int in, int out, Packet& p, int vl) { return vl; }

  // H5, stateful queuing. Queues per input VL, given the fabric queuing policy's `base`: a
  // mechanism that isolates flows in queues of its own (RECN, FBICM, DDBBM) adds them here. Asked
  // once, before the run.
  virtual int NumQueues(int base) const { return base; }
  // The queue at input (in, in_vl) for a packet routed to (out, out_vl); `chosen` is the queuing
  // policy's choice.
  virtual int Queue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p,
                    int chosen) {
    return chosen;
  }
  // A control message from the device at the other end of `port`.
  virtual void OnControl(SwitchView& s, int port, uint32_t a, uint64_t b) {}
  // H7: a side-band broadcast (SideBandView::Broadcast).
  virtual void OnSignal(SwitchView& s, uint32_t a, uint64_t b) {}

  // H6, queue-level arbitration. When true, the crossbar asks PickQueue which of an input's
  // queues requesting (out, vl) goes, instead of the oldest request that can go.
  virtual bool ArbitratesQueues() const { return false; }
  // Returns an index into `queues` (the queue numbers of input `in` whose heads request (out, vl)
  // and could go now, oldest request first; n >= 1), or -1: none may go (a queue the mechanism
  // holds; it calls SwitchView::Kick when that changes). Asked more than once for one decision,
  // so it must not change state; the choice is made when OnDequeue reports the packet that left.
  virtual int PickQueue(const SwitchView& s, int in, int out, int vl, const int* queues,
                        int n) const {
    return 0;
  }
  // Post-processing at a queue's head (FBICM's, CCFIT's): when packet `head` reaches the head of
  // queue q of input (in, vl), the queue it belongs in; another queue moves it to that queue's
  // tail (its buffer space and counts unchanged), and the next head is asked. Asked only when
  // ChecksHeads().
  virtual bool ChecksHeads() const { return false; }
  virtual int HeadQueue(SwitchView& s, int in, int vl, int q, const Packet& head) { return q; }
};

}  // namespace ibemu::cc
