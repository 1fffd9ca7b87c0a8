// What a Congestion Control Agent holds (IBA annex A10): the settings a CC manager writes with CC
// MADs, the CC_Key that protects them, and the congestion logs. A switch has one (its management
// port's); a CA has one per port. The data plane reads the settings (switch marking, CA
// throttling); the CCA (cca.cc) is the only writer besides the scenario loader.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace ibemu::mgmt {

// CC timestamps and CCTI_Timer count 1.024 us.
constexpr int64_t kPsPerCcTick = 1024 * 1000;

struct SwitchCongestionSetting {
  uint32_t control_map = 0;
  std::array<uint8_t, 32> victim_mask{};  // 256-bit port mask as on the wire (big-endian)
  std::array<uint8_t, 32> credit_mask{};
  uint8_t threshold = 0;    // 0 never marks; 1..15 lowest to highest buffer fill
  uint8_t packet_size = 0;  // 64-byte credits; smaller packets are never marked
  uint8_t cs_threshold = 0;
  uint16_t cs_return_delay = 0;  // CCT entry format: shift (2 bits) : multiplier (14 bits)
  uint16_t marking_rate = 0;     // mean number of eligible packets between marks

  // A Set applies only the parts its Control_Map selects: bit 0 Victim_Mask, 1 Credit_Mask,
  // 2 Threshold and Packet_Size, 3 CS_Threshold and CS_ReturnDelay, 4 Marking_Rate.
  void Apply(const SwitchCongestionSetting& w) {
    control_map = w.control_map;
    if (w.control_map & 1) victim_mask = w.victim_mask;
    if (w.control_map & 2) credit_mask = w.credit_mask;
    if (w.control_map & 4) {
      threshold = w.threshold;
      packet_size = w.packet_size;
    }
    if (w.control_map & 8) {
      cs_threshold = w.cs_threshold;
      cs_return_delay = w.cs_return_delay;
    }
    if (w.control_map & 16) marking_rate = w.marking_rate;
  }
};

struct SwitchPortCongestionSetting {
  bool valid = false;
  uint8_t control_type = 0;  // 0 congestion, 1 credit starvation
  uint8_t threshold = 0;
  uint8_t packet_size = 0;
  uint16_t marking_rate = 0;  // Cong_Parm for Control_Type 1
};

struct CaCongestionEntry {
  uint16_t ccti_timer = 0;  // 1.024 us units
  uint8_t ccti_increase = 0;
  uint8_t trigger_threshold = 0;
  uint8_t ccti_min = 0;
};

struct CaCongestionSetting {
  uint16_t port_control = 0;  // bit 0: 0 QP-based, 1 SL-based
  uint16_t control_map = 0;   // bit n: SL n's entry is valid
  std::array<CaCongestionEntry, 16> sl{};

  // A Set applies Port_Control and the SL entries its Control_Map selects.
  void Apply(const CaCongestionSetting& w) {
    port_control = w.port_control;
    control_map = w.control_map;
    for (int i = 0; i < 16; ++i)
      if (w.control_map >> i & 1) sl[i] = w.sl[i];
  }
  // The first SL of Control_Map whose CCTI_Min lies above the table's last index (it could
  // never be reached), or -1.
  int SlWithCctiMinAbove(int ccti_limit) const {
    for (int i = 0; i < 16; ++i)
      if ((control_map >> i & 1) && sl[i].ccti_min > ccti_limit) return i;
    return -1;
  }
};

struct CcKeyInfo {
  uint64_t key = 0;
  bool protect = false;
  uint16_t lease_period = 0;  // seconds; 0 = the protection never lapses
  uint16_t violations = 0;
  int64_t lease_ends_ps = -1;  // a violation started the lease; it ends here (-1: not running)
};

// The CongestionLog a CCA keeps (IBA annex A10): a switch logs the packets it marks, a CA the
// BECNs that raise a CCTI to its Trigger_Threshold. Only the most recent events fit (15 on a
// switch, 13 on a CA); a Get returns them, newest first, and clears them and the map, while the
// counter runs on (16 bits, wrapping) so a poller can tell how many it missed.
struct CongestionEvent {
  uint16_t slid = 0, dlid = 0;  // switch: the marked packet's
  uint8_t sl = 0;
  uint32_t local_qp = 0, remote_qp = 0;  // CA: the throttled QP and its peer
  uint16_t local_lid = 0, remote_lid = 0;
  uint8_t service_type = 0;  // CA: 0 RC, 1 UC, 2 RD, 3 UD
  uint32_t timestamp = 0;    // 1.024 us ticks
};

struct CongestionLog {
  static constexpr int kMaxEvents = 15;
  uint16_t counter = 0;           // LogEventsCounter (switch) / ThresholdEventCounter (CA)
  std::array<uint8_t, 32> map{};  // switch: PortMap (256 bits, big-endian); CA: SL map in [30..31]
  std::array<CongestionEvent, kMaxEvents> events{};  // ring, oldest first from `first`
  int first = 0, count = 0;

  void Add(const CongestionEvent& e, int capacity) {
    ++counter;
    if (count < capacity) {
      events[(first + count++) % capacity] = e;
    } else {
      events[first] = e;
      first = (first + 1) % capacity;
    }
  }
  void MarkBit(int bit) { map[31 - bit / 8] |= static_cast<uint8_t>(1u << (bit % 8)); }
  void Clear() {
    first = count = 0;
    map.fill(0);
  }
};

struct CcState {
  // The CA's table: 128 entries (two 64-entry blocks), as many as OpenSM's cc_cct takes.
  static constexpr int kCctBlocks = 2;
  CcKeyInfo key;
  SwitchCongestionSetting sw;
  std::vector<SwitchPortCongestionSetting> ports;  // switch: [port]
  CaCongestionSetting ca;
  uint16_t ccti_limit = 0;
  std::array<uint16_t, 64 * kCctBlocks> cct{};  // shift:multiplier entries
  CongestionLog log;
};

}  // namespace ibemu::mgmt
