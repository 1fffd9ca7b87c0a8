// H7: a deterministic fabric-wide side band, for mechanisms that act on a global view (self-tuned
// global throttling gathers the count of full buffers every g and tells every source g later).
// It is an LP that is not a node: devices report to it and it broadcasts to every device, each
// message taking the mechanism's side-band latency. That latency is a lookahead between every
// pair of processes, so a partitioned run stays the same run (docs/architecture.md §9).
#pragma once
#include <cstdint>

#include "emulator/engine/event.h"

namespace ibemu::cc {

using SimTime = engine::SimTime;

class SideBandView {
 public:
  virtual ~SideBandView() = default;
  virtual SimTime Now() const = 0;
  // Devices are LPs 0..NumDevices()-1 (the topology's nodes).
  virtual int NumDevices() const = 0;
  // Sends (a, b) to every device (its SwitchCc or HcaCc::OnSignal), arriving one side-band
  // latency from now.
  virtual void Broadcast(uint32_t a, uint64_t b) = 0;
  // Calls SideBandCc::OnTimer(a, b) at time t (>= Now()).
  virtual void PostTimer(SimTime t, uint32_t a, uint64_t b) = 0;
};

class SideBandCc {
 public:
  virtual ~SideBandCc() = default;
  virtual void Start(SideBandView& v) {}
  // A device's report (SwitchView or HcaView::Report), sent one side-band latency ago.
  virtual void OnReport(SideBandView& v, engine::LpId from, uint32_t a, uint64_t b) {}
  virtual void OnTimer(SideBandView& v, uint32_t a, uint64_t b) {}
};

}  // namespace ibemu::cc
