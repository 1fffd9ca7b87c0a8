// MVPM, Marking and Validation Packet Marking (Ferrer et al., IEEE TC 2012, §3.1 [M:L158-L170];
// ../shared/notes/mvcm_santos.md A.1.2): a data packet that arrives at an input buffer holding
// more than th_in of its capacity gets the marking bit (MB, FECN); a marked packet that leaves
// through an output whose buffer holds more than th_out gets the validation bit (VB). Bits are
// never cleared, and VB never comes without MB. Hot flows (through a congested input and a
// saturated output) carry 11, warm ones (stuck behind them in the input only) 10, the rest 00.
// On a switch without output buffers the output's queue is the packets queued for it at every
// input, against one input VL buffer.
#pragma once
#include "emulator/cc/mvcm/mvcm_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::mvcm {

class MvpmMarking : public SwitchCc {
 public:
  explicit MvpmMarking(const Options& o) : opt_(o) {}

  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override;
  void OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) override;

 private:
  Options opt_;
};

}  // namespace ibemu::cc::mvcm
