// The switches of DBBM and DDBBM in the paper's form: a packet's queue (here its output VL) is
// chosen at every hop from its destination and its congestion bit, whatever its SL.
#pragma once
#include "emulator/cc/dbbm/dbbm_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::dbbm {

class HeaderQueues : public SwitchCc {
 public:
  explicit HeaderQueues(const Options& o) : opt_(o) {}
  bool ChoosesVls() const override { return true; }
  int OutputVl(SwitchView& s, int in, int out, Packet& p, int vl) override;

 private:
  Options opt_;
};

}  // namespace ibemu::cc::dbbm
