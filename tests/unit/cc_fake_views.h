// Views of a switch and an HCA whose state the test sets, for driving a congestion-control
// mechanism's hooks without a fabric (santos_test, mvcm_test).
#pragma once
#include <map>
#include <utility>

#include "emulator/cc/hca_cc.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::testing {

using engine::SimTime;

// Eight ports, one VL; every count is what the maps say (0 when absent).
class FakeSwitchView : public cc::SwitchView {
 public:
  uint32_t capacity = 132;                          // blocks per input VL
  uint32_t obuf_capacity = 0;                       // output buffers (CIOQ); 0: none
  std::map<int, uint32_t> used;                     // input -> blocks
  std::map<std::pair<int, int>, uint32_t> arrived;  // (input, output) -> blocks, tails in
  std::map<int, uint32_t> queued;                   // output -> blocks at the inputs
  std::map<int, uint32_t> output_held;              // output -> blocks in its buffer
  mgmt::CcState cc;

  SimTime Now() const override { return 0; }
  int NumPorts() const override { return 8; }
  int DataVls() const override { return 1; }
  uint32_t VlCapacityBlocks() const override { return capacity; }
  uint32_t QueuedBlocks(int out, int vl) const override { return At(queued, out); }
  uint32_t QueuedBlocksFrom(int in, int out, int vl) const override { return 0; }
  uint32_t ArrivedBlocks(int out, int vl) const override { return 0; }
  uint32_t ArrivedBlocksFrom(int in, int out, int vl) const override {
    return At(arrived, {in, out});
  }
  int ContributingInputs(int out, int vl) const override { return 0; }
  uint32_t InputUsedBlocks(int in, int vl) const override { return At(used, in); }
  bool CreditStarved(int out, int vl) const override { return false; }
  mgmt::CcState& Cca() override { return cc; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override {}
  void SendControl(int port, uint32_t a, uint64_t b) override {}
  void Report(uint32_t a, uint64_t b) override {}
  uint32_t QueueBlocks(int in, int vl, int q) const override { return 0; }
  SimTime SerializationTime(int port, uint32_t bytes) const override { return bytes * 1000; }
  uint32_t QueuePackets(int in, int vl, int q) const override { return 0; }
  uint32_t OutputBufferCapacityBlocks() const override { return obuf_capacity; }
  uint32_t OutputBufferBlocks(int out, int vl) const override { return At(output_held, out); }

 private:
  template <class K>
  static uint32_t At(const std::map<K, uint32_t>& m, const K& k) {
    auto it = m.find(k);
    return it == m.end() ? 0 : it->second;
  }
};

// One port, four QPs to LID 9; the gates the mechanism sets are kept.
class FakeHcaView : public cc::HcaView {
 public:
  SimTime now = 0;
  uint32_t mtu = 2048;
  std::map<uint32_t, SimTime> gates;
  mgmt::CcState cc;

  SimTime Now() const override { return now; }
  int NumPorts() const override { return 1; }
  mgmt::CcState& Cca(int port) override { return cc; }
  uint32_t NumQps() const override { return 4; }
  int QpPort(uint32_t qp) const override { return 1; }
  int QpSl(uint32_t qp) const override { return 0; }
  uint32_t QpNumber(uint32_t qp) const override { return 0x100 + qp; }
  uint16_t QpRemoteLid(uint32_t qp) const override { return 9; }
  SimTime SerializationTime(int port, uint32_t bytes) const override { return bytes * 1000; }
  uint32_t Mtu() const override { return mtu; }
  void SetQpGate(uint32_t qp, SimTime t) override { gates[qp] = t; }
  void SetSlGate(int port, int sl, SimTime t) override {}
  SimTime QpGate(uint32_t qp) const override { return gates.at(qp); }
  SimTime SlGate(int port, int sl) const override { return 0; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override {}
  void SendControl(int port, uint32_t a, uint64_t b) override {}
  void Report(uint32_t a, uint64_t b) override {}
  int NumEndNodes() const override { return 64; }
  uint16_t Lid(int port) const override { return 1; }
  int Sl2Vl(int port, int sl) const override { return sl; }
  int DataVls(int port) const override { return 8; }
  void SendMad(int port, uint16_t dlid, int sl, int vl, const uint8_t* mad) override {}
};

}  // namespace ibemu::testing
