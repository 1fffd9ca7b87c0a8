// Santos et al.'s switch marking (INFOCOM 2003 §IV-A, [S:L99-L115]): marking starts when an input
// buffer becomes full. The naive policy marks the packets in that buffer; the proposed one calls
// every output that a packet in the full buffer waits for congested and marks, as they leave on
// it, as many packets as the switch held for that output at the trigger (cnt2 = cnt1). The
// output trigger is the same with the output's queue, over all inputs, as the buffer: marking
// as an output-buffered switch would. Marks set FECN in the BTH of data packets; the destination
// echoes them on the packet's ACK. Counters per (output, VL) and buffers per (input, VL), the
// paper's "each virtual lane individually".
#pragma once
#include <cstdint>
#include <vector>

#include "emulator/cc/santos/santos_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::santos {

class InputMarking : public SwitchCc {
 public:
  explicit InputMarking(const Options& o) : opt_(o) {}

  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override;
  void OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p) override;
  void OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) override;

  // For tests: packets waiting for (out, vl) (cnt1), and still to be marked there (cnt2).
  uint32_t Waiting(int out, int vl) const { return cnt1_[PortVl(out, vl)]; }
  uint32_t ToMark(int out, int vl) const { return cnt2_[PortVl(out, vl)]; }

 private:
  struct Resident {
    uint64_t id;
    uint16_t out;
    uint8_t vl;
    bool marked;  // naive: marked while it sat in a full buffer
  };
  void Init(SwitchView& s);
  bool BecomesFull(SwitchView& s, uint32_t used, uint32_t arriving) const;
  size_t PortVl(int port, int vl) const { return static_cast<size_t>(port) * vls_ + vl; }

  Options opt_;
  int vls_ = 0;
  std::vector<std::vector<Resident>> resident_;  // [input PortVl]: packets queued there
  std::vector<uint32_t> cnt1_, cnt2_;            // [output PortVl]
  // Naive: the ids of marked packets that left their input and are still in the switch (at most
  // one without output buffers: the one about to be sent).
  std::vector<uint64_t> leaving_marked_;
};

}  // namespace ibemu::cc::santos
