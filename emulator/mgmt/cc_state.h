// What a Congestion Control Agent holds (IBA annex A10): the settings a CC manager writes with CC
// MADs, the CC_Key that protects them, and the congestion logs. A switch has one (its management
// port's); a CA has one per port. The data plane reads the settings (switch marking, CA
// throttling); the CCA (cca.cc) is the only writer besides the scenario loader.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "common/mad/cc_settings.h"

namespace ibemu::mgmt {

// CC timestamps and CCTI_Timer count 1.024 us.
constexpr int64_t kPsPerCcTick = 1024 * 1000;

// The attribute contents are the wire's (common/mad/cc_settings.h); the agent holds them as is.
using mad::CaCongestionEntry;
using mad::CaCongestionSetting;
using mad::SwitchCongestionSetting;
using mad::SwitchPortCongestionSetting;

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

// Where the CCA sends its trap (Bad CC_Key): the Trap fields of the class's ClassPortInfo, as a
// manager Sets them. TrapLID 0: no trap is sent.
struct CcTrapTarget {
  uint16_t lid = 0;
  uint32_t qp = 0;
  uint32_t qkey = 0;
  uint8_t sl = 0;
  uint16_t pkey = 0xFFFF;
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
  CcTrapTarget trap;
  uint32_t traps_sent = 0;  // also the TIDs of the traps
};

}  // namespace ibemu::mgmt
