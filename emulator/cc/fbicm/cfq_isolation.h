// FBICM's switch (Escudero-Sahuquillo et al.; thesis Paper V §II-§III): per input port and VL a
// normal queue (the queuing policy's) and a few congested-flow queues (CFQs), each with a CAM
// line naming the destination it isolates; CAM lines at the output ports for what the
// downstream devices isolate; allocation, Stop/Go and release by control messages upstream. With
// `throttle` (CCFIT), root CFQs above High put their output in the congestion state, and packets
// leaving it are marked for IB CC's throttling at the sources.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "emulator/cc/fbicm/fbicm_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::fbicm {

class CfqIsolation : public SwitchCc {
 public:
  CfqIsolation(const Options& o, uint64_t seed) : opt_(o), rng_(seed) {}

  int NumQueues(int base) const override;
  int Queue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p,
            int chosen) override;
  bool ChecksHeads() const override { return true; }
  int HeadQueue(SwitchView& s, int in, int vl, int q, const Packet& head) override;
  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override;
  void OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p) override;
  bool ArbitratesQueues() const override { return true; }
  int PickQueue(const SwitchView& s, int in, int out, int vl, const int* queues,
                int n) const override;
  void OnControl(SwitchView& s, int port, uint32_t a, uint64_t b) override;
  void OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) override;

 private:
  struct Line {  // an input port's CAM line and its CFQ
    bool valid = false;
    bool root = false;        // allocated by local detection: its output is the congestion point
    bool closing = false;     // the downstream released it: takes no new packets, then goes
    bool stop_sent = false;   // the upstream device was told to stop
    bool told = false;        // the upstream device was told of it (it holds a line for it)
    bool above_high = false;  // CCFIT: counted in its output's congestion state
    uint16_t dlid = 0;
    uint16_t out = 0;
  };
  struct Root {          // EcoCC: a normal queue (VOQ) found at a root
    bool above = false;  // above high, until below low: its output is congested
    bool told = false;   // the upstream device was told to isolate dlid
    uint16_t dlid = 0;
    uint16_t out = 0;
    uint8_t out_vl = 0;
  };
  struct OutLine {  // an output port's CAM line: the downstream device isolates dlid
    uint16_t dlid = 0;
    bool stopped = false;
  };

  void Size(const SwitchView& s);
  Line* LineAt(int in, int vl, int c) { return &lines_[(in * vls_ + vl) * opt_.cfqs + c]; }
  const Line* LineAt(int in, int vl, int c) const {
    return &lines_[(in * vls_ + vl) * opt_.cfqs + c];
  }
  int Find(int in, int vl, uint16_t dlid) const;  // the CFQ (0..cfqs-1) isolating dlid, or -1
  int FindClosing(int in, int vl, uint16_t dlid) const;  // a closing line's CFQ for dlid, or -1
  // Whether a line or a root of input `in` has told the upstream device of dlid: the upstream
  // keeps one line for them all, released when the last of them goes.
  bool Told(int in, int vl, uint16_t dlid) const;
  int Allocate(int in, int vl, uint16_t dlid, int out, bool root);
  void Release(SwitchView& s, int in, int vl, int c);
  std::vector<OutLine>& OutLines(int out, int vl) { return out_lines_[out * vls_ + vl]; }
  const std::vector<OutLine>& OutLines(int out, int vl) const {
    return out_lines_[out * vls_ + vl];
  }
  const OutLine* FindOut(int out, int vl, uint16_t dlid) const;
  Root& RootAt(int in, int vl, int q) { return roots_[(in * vls_ + vl) * base_ + q]; }
  void RootEnqueue(SwitchView& s, int in, int in_vl, int q, int out, int out_vl);
  void RootDequeue(SwitchView& s, int in, int in_vl, int q);
  void Tell(SwitchView& s, int in, int vl, Control kind, uint16_t dlid);

  Options opt_;
  std::mt19937_64 rng_;
  mutable int base_ = 1;  // the queuing policy's queues: the NFQs; CFQ c is queue base_ + c
  int ports_ = 0, vls_ = 0;
  std::vector<Line> lines_;                      // [(in * vls + vl) * cfqs + c]
  std::vector<std::vector<OutLine>> out_lines_;  // [out * vls + vl]
  std::vector<int> congested_;                   // [out * vls + vl]: roots above High
  std::vector<Root> roots_;                      // [(in * vls + vl) * base + q]: EcoCC
};

}  // namespace ibemu::cc::fbicm
