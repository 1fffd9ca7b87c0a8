// IB CC at a switch (IBA annex A10.2): each Port VL is congested while what is queued for it is
// above the level its Threshold sets (with optional hysteresis), and a packet leaving a congested
// Port VL that is the root of the congestion (it had credits), or whose port is in Victim_Mask,
// is eligible for FECN if it is at least Packet_Size credits; Marking_Rate spaces the marks.
// Credit starvation (Control_Type 1, or Credit_Mask): while an output Port VL is above its
// CS_Threshold, the credits of what leaves for it go back upstream CS_ReturnDelay late.
// Settings are read from the switch's CCA on every packet, so a Set acts on the next one.
#pragma once
#include <random>
#include <vector>

#include "emulator/cc/ib/ib_cc_options.h"
#include "emulator/cc/switch_cc.h"

namespace ibemu::cc::ib {

class SwitchMarking : public SwitchCc {
 public:
  explicit SwitchMarking(const Options& o) : opt_(o), rng_(o.seed) {}

  void OnEnqueue(SwitchView& s, int in, int in_vl, int out, int out_vl, Packet& p) override;
  void OnTransmit(SwitchView& s, int in, int out, int vl, Packet* p) override;
  void OnDequeue(SwitchView& s, int in, int in_vl, int out, int out_vl, const Packet& p) override;
  SimTime CreditReturnDelay(SwitchView& s, int in, int in_vl, int out, int out_vl,
                            const Packet& p) override;

  // Threshold 1..15 as a level in blocks of a VL buffer of `capacity` blocks: 1 is the highest
  // fill, 15 the lowest (capacity / 16), evenly spaced; 0 never marks.
  static uint32_t Level(uint8_t threshold, uint32_t capacity) {
    return threshold == 0 ? UINT32_MAX : capacity * (16u - threshold) / 16u;
  }
  bool Congested(int out, int vl) const;

 private:
  struct PortSettings {
    uint8_t threshold = 0, packet_size = 0;
    uint16_t marking_rate = 0;
  };
  void Init(SwitchView& s);
  static PortSettings SettingsOf(const mgmt::CcState& cc, int out);
  void Evaluate(SwitchView& s, int in, int out, int vl);
  size_t PortVl(int out, int vl) const { return static_cast<size_t>(out) * vls_ + vl; }

  Options opt_;
  std::mt19937_64 rng_;
  int ports_ = 0, vls_ = 0;
  // Per Port VL: congested (sum modes), or the number of inputs above the level (VoQ mode).
  std::vector<uint16_t> state_;
  std::vector<uint8_t> voq_above_;    // [PortVl * (ports + 1) + in], VoQ mode
  std::vector<uint32_t> since_mark_;  // [port]: eligible packets since the last mark (counter)
  // From Init: the output buffer's capacity (0: none), a VL buffer's, the capacity Threshold's
  // levels are of, and the switch's CCA.
  uint32_t obuf_cap_ = 0, vl_cap_ = 0, level_cap_ = 0;
  mgmt::CcState* cca_ = nullptr;
  // The packet OnDequeue just evaluated its Port VL for, and when. A switch without output
  // buffers sends the packet it read straight to the link, so OnTransmit of that packet at that
  // instant, with no enqueue between, would evaluate the same counts again (Evaluate
  // reaches a fixed point in one step): it skips the second evaluation, a third of the
  // evaluations a packet-hop costs. The sum modes only; VoQ evaluates every input at transmit.
  const Packet* evaluated_ = nullptr;
  int evaluated_out_ = 0, evaluated_vl_ = 0;
  SimTime evaluated_at_ = 0;
};

}  // namespace ibemu::cc::ib
