// The side band's LP (H7): runs the mechanism's SideBandCc, takes the devices' reports and
// broadcasts to them. Its LP id follows the topology's nodes; a partitioned run gives it to
// partition 0.
#pragma once
#include <memory>

#include "emulator/cc/side_band.h"
#include "emulator/engine/logical_process.h"

namespace ibemu::cc {

class SideBandLp : public engine::LogicalProcess, private SideBandView {
 public:
  SideBandLp(engine::LpId id, int num_devices, SimTime latency, std::unique_ptr<SideBandCc> cc)
      : LogicalProcess(id), num_devices_(num_devices), latency_(latency), cc_(std::move(cc)) {}

  void Start() override { cc_->Start(*this); }
  void Handle(const engine::Event& e) override {
    if (e.kind == engine::kSideBandArrive)
      cc_->OnReport(*this, e.src, e.a, e.b);
    else if (e.kind == kTimer)
      cc_->OnTimer(*this, e.a, e.b);
  }

 private:
  static constexpr uint16_t kTimer = engine::kFirstLocalKind;

  // SideBandView
  SimTime Now() const override { return now(); }
  int NumDevices() const override { return num_devices_; }
  void Broadcast(uint32_t a, uint64_t b) override {
    for (int d = 0; d < num_devices_; ++d)
      Post(static_cast<engine::LpId>(d), now() + latency_, engine::kSideBandArrive, 0, a, b);
  }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { Post(id(), t, kTimer, 0, a, b); }

  int num_devices_;
  SimTime latency_;
  std::unique_ptr<SideBandCc> cc_;
};

}  // namespace ibemu::cc
