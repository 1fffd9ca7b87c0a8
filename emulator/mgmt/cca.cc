#include "emulator/mgmt/cca.h"

#include <algorithm>
#include <cstring>

#include "common/mad/gs_attributes.h"

namespace ibemu::mgmt {
namespace {

using namespace mad;

constexpr int kPortsPerBlock = switch_port_congestion_setting::kElementsPerBlock;

// IBA A10.4.1 (as modelled here): a CCA whose CC_Key is 0 takes every MAD; otherwise the MAD's
// key must match. A mismatch refuses Sets always and Gets too while CC_KeyProtectBit is set; a
// refused MAD is dropped without an answer and counted in CC_KeyViolations, and starts the lease:
// when CC_KeyLeasePeriod seconds pass without a correct key, the protect bit lapses so that a
// manager can take the key over. A Get that passes without the key reads CC_Key as 0.
enum class KeyCheck { kPass, kPassHidden, kRefuse };

KeyCheck CheckCcKey(CcKeyInfo& k, MadView m, int64_t now_ps) {
  if (k.lease_ends_ps >= 0 && now_ps >= k.lease_ends_ps) {
    k.protect = false;
    k.lease_ends_ps = -1;
  }
  if (k.key == 0 || Get(m.b, hdr::kCcKey) == k.key) {
    k.lease_ends_ps = -1;
    return KeyCheck::kPass;
  }
  if (m.method() == method::kGet && !k.protect) return KeyCheck::kPassHidden;
  if (k.violations < 0xFFFF) ++k.violations;
  if (k.lease_period != 0 && k.lease_ends_ps < 0)
    k.lease_ends_ps = now_ps + int64_t{k.lease_period} * 1'000'000'000'000;
  return KeyCheck::kRefuse;
}

void Bytes(uint8_t* data, int offset, const std::array<uint8_t, 32>& v) {
  std::memcpy(data + offset, v.data(), v.size());
}

void FillSwitchSetting(const SwitchCongestionSetting& s, uint8_t* data) {
  using namespace switch_congestion_setting;
  Set(data, kControlMap, s.control_map);
  Bytes(data, kVictimMask.byte, s.victim_mask);
  Bytes(data, kCreditMask.byte, s.credit_mask);
  Set(data, kThreshold, s.threshold);
  Set(data, kPacketSize, s.packet_size);
  Set(data, kCsThreshold, s.cs_threshold);
  Set(data, kCsReturnDelay, s.cs_return_delay);
  Set(data, kMarkingRate, s.marking_rate);
}

SwitchCongestionSetting ReadSwitchSetting(const uint8_t* data) {
  using namespace switch_congestion_setting;
  SwitchCongestionSetting s;
  s.control_map = static_cast<uint32_t>(Get(data, kControlMap));
  std::memcpy(s.victim_mask.data(), data + kVictimMask.byte, 32);
  std::memcpy(s.credit_mask.data(), data + kCreditMask.byte, 32);
  s.threshold = static_cast<uint8_t>(Get(data, kThreshold));
  s.packet_size = static_cast<uint8_t>(Get(data, kPacketSize));
  s.cs_threshold = static_cast<uint8_t>(Get(data, kCsThreshold));
  s.cs_return_delay = static_cast<uint16_t>(Get(data, kCsReturnDelay));
  s.marking_rate = static_cast<uint16_t>(Get(data, kMarkingRate));
  return s;
}

uint8_t* Element(uint8_t* data, int i) {
  return data + i * switch_port_congestion_setting::kElementBytes;
}

void FillPortBlock(const CcState& cc, int block, uint8_t* data) {
  using namespace switch_port_congestion_setting;
  for (int i = 0; i < kPortsPerBlock; ++i) {
    size_t port = static_cast<size_t>(block * kPortsPerBlock + i);
    if (port >= cc.ports.size()) break;
    const SwitchPortCongestionSetting& p = cc.ports[port];
    uint8_t* e = Element(data, i);
    Set(e, kValid, p.valid);
    Set(e, kControlType, p.control_type);
    Set(e, kThreshold, p.threshold);
    Set(e, kPacketSize, p.packet_size);
    Set(e, kCongParmMarkingRate, p.marking_rate);
  }
}

void ReadPortBlock(CcState& cc, int block, const uint8_t* data) {
  using namespace switch_port_congestion_setting;
  for (int i = 0; i < kPortsPerBlock; ++i) {
    size_t port = static_cast<size_t>(block * kPortsPerBlock + i);
    if (port >= cc.ports.size()) break;
    const uint8_t* e = data + i * kElementBytes;
    SwitchPortCongestionSetting& p = cc.ports[port];
    p.valid = Get(e, kValid) != 0;
    p.control_type = static_cast<uint8_t>(Get(e, kControlType));
    p.threshold = static_cast<uint8_t>(Get(e, kThreshold));
    p.packet_size = static_cast<uint8_t>(Get(e, kPacketSize));
    p.marking_rate = static_cast<uint16_t>(Get(e, kCongParmMarkingRate));
  }
}

uint8_t* CaEntry(uint8_t* data, int sl) {
  return data + ca_congestion_setting::kEntriesOffset + sl * ca_congestion_setting::kEntryBytes;
}

void FillCaSetting(const CaCongestionSetting& s, uint8_t* data) {
  using namespace ca_congestion_setting;
  Set(data, kPortControl, s.port_control);
  Set(data, kControlMap, s.control_map);
  for (int sl = 0; sl < 16; ++sl) {
    uint8_t* e = CaEntry(data, sl);
    Set(e, kCctiTimer, s.sl[sl].ccti_timer);
    Set(e, kCctiIncrease, s.sl[sl].ccti_increase);
    Set(e, kTriggerThreshold, s.sl[sl].trigger_threshold);
    Set(e, kCctiMin, s.sl[sl].ccti_min);
  }
}

CaCongestionSetting ReadCaSetting(uint8_t* data) {
  using namespace ca_congestion_setting;
  CaCongestionSetting s;
  s.port_control = static_cast<uint16_t>(Get(data, kPortControl));
  s.control_map = static_cast<uint16_t>(Get(data, kControlMap));
  for (int sl = 0; sl < 16; ++sl) {
    const uint8_t* e = CaEntry(data, sl);
    CaCongestionEntry& x = s.sl[sl];
    x.ccti_timer = static_cast<uint16_t>(Get(e, kCctiTimer));
    x.ccti_increase = static_cast<uint8_t>(Get(e, kCctiIncrease));
    x.trigger_threshold = static_cast<uint8_t>(Get(e, kTriggerThreshold));
    x.ccti_min = static_cast<uint8_t>(Get(e, kCctiMin));
  }
  return s;
}

// A CACongestionSetting Set: refused if a CCTI_Min it sets could never be reached.
bool ApplyCaSetting(CcState& cc, uint8_t* data) {
  CaCongestionSetting w = ReadCaSetting(data);
  if (w.SlWithCctiMinAbove(cc.ccti_limit) >= 0) return false;
  cc.ca.Apply(w);
  return true;
}

void FillCctBlock(const CcState& cc, int block, uint8_t* data) {
  using namespace congestion_control_table;
  Set(data, kCctiLimit, cc.ccti_limit);
  for (int i = 0; i < kEntriesPerBlock; ++i) {
    uint16_t v = cc.cct[static_cast<size_t>(block * kEntriesPerBlock + i)];
    uint8_t* e = data + kEntriesOffset + 2 * i;
    Set(e, kCctShift, v >> 14);
    Set(e, kCctMultiplier, v & 0x3FFF);
  }
}

// A CCT block: CCTI_Limit is the last valid index of the whole table, so it must fit the table
// and the block must not lie wholly beyond it (IBA A10.4.3.9).
bool ApplyCctBlock(CcState& cc, int block, const uint8_t* data) {
  using namespace congestion_control_table;
  uint64_t limit = Get(data, kCctiLimit);
  if (limit >= cc.cct.size()) return false;
  if (limit != 0 && static_cast<uint64_t>(block) * kEntriesPerBlock > limit) return false;
  cc.ccti_limit = static_cast<uint16_t>(limit);
  for (int i = 0; i < kEntriesPerBlock; ++i) {
    const uint8_t* e = data + kEntriesOffset + 2 * i;
    cc.cct[static_cast<size_t>(block * kEntriesPerBlock + i)] =
        static_cast<uint16_t>(Get(e, kCctShift) << 14 | Get(e, kCctMultiplier));
  }
  return true;
}

}  // namespace

AgentVerdict HandleCongestion(ManagedDevice& d, int in, MadView m) {
  if (auto v = CheckRequest(m, 2)) return *v;
  CcState& cc = d.cc_state(in);
  KeyCheck key = CheckCcKey(cc.key, m, d.mgmt_now_ps());
  if (key == KeyCheck::kRefuse) return AgentVerdict::kDrop;
  bool set = m.method() == method::kSet;
  bool sw = d.is_switch();
  uint32_t mod = m.attr_mod();
  uint8_t* data = m.gs_data();
  auto bad = [&](uint16_t st) {
    MakeResponse(m, st);
    return AgentVerdict::kRespond;
  };
  switch (m.attr_id()) {
    case attr::kClassPortInfo:
      if (set) return bad(status::kBadMethodAttr);
      std::memset(data, 0, kGsDataBytes);
      Set(data, class_port_info::kBaseVersion, 1);
      Set(data, class_port_info::kClassVersion, 2);
      Set(data, class_port_info::kRespTimeValue, 0x10);
      break;
    case attr::kCongestionInfo:
      if (set) return bad(status::kBadMethodAttr);
      std::memset(data, 0, kGsDataBytes);
      Set(data, congestion_info::kControlTableCap, sw ? 0 : CcState::kCctBlocks);
      break;
    case attr::kCongestionKeyInfo: {
      using namespace congestion_key_info;
      if (set) {
        cc.key.key = Get(data, kCcKey);
        cc.key.protect = Get(data, kCcKeyProtectBit) != 0;
        cc.key.lease_period = static_cast<uint16_t>(Get(data, kCcKeyLeasePeriod));
        cc.key.violations = static_cast<uint16_t>(Get(data, kCcKeyViolations));
      }
      std::memset(data, 0, kGsDataBytes);
      Set(data, kCcKey, key == KeyCheck::kPassHidden ? 0 : cc.key.key);
      Set(data, kCcKeyProtectBit, cc.key.protect);
      Set(data, kCcKeyLeasePeriod, cc.key.lease_period);
      Set(data, kCcKeyViolations, cc.key.violations);
      break;
    }
    case attr::kCongestionLog: {
      if (set) return bad(status::kBadMethodAttr);
      using namespace congestion_log;
      uint8_t* log = m.b + kCcLogDataOffset;
      std::memset(log, 0, kCcLogDataBytes);
      uint64_t stamp = static_cast<uint64_t>(d.mgmt_now_ps() / kPsPerCcTick) & 0xFFFFFFFF;
      Set(log, kLogType, sw ? kLogTypeSwitch : kLogTypeCa);
      Set(log, sw ? kSwitchCurrentTimeStamp : kCaCurrentTimeStamp, stamp);
      CongestionLog& l = cc.log;
      int cap = sw ? kSwitchEntries : kCaEntries;
      if (sw) {
        Set(log, kLogEventsCounter, l.counter);
        std::memcpy(log + kPortMap.byte, l.map.data(), l.map.size());
      } else {
        Set(log, kThresholdEventCounter, l.counter);
        Set(log, kThresholdCongestionEventMap, static_cast<uint64_t>(l.map[30]) << 8 | l.map[31]);
      }
      for (int i = 0; i < l.count; ++i) {  // newest first
        const CongestionEvent& e = l.events[(l.first + l.count - 1 - i) % cap];
        if (sw) {
          uint8_t* x = log + kSwitchEntriesOffset + i * kSwitchEntryBytes;
          Set(x, kEntrySlid, e.slid);
          Set(x, kEntryDlid, e.dlid);
          Set(x, kEntrySl, e.sl);
          Set(x, kEntryTimestamp, e.timestamp);
        } else {
          uint8_t* x = log + kCaEntriesOffset + i * kCaEntryBytes;
          Set(x, kCaEntryLocalQp, e.local_qp);
          Set(x, kCaEntrySl, e.sl);
          Set(x, kCaEntryServiceType, e.service_type);
          Set(x, kCaEntryRemoteQp, e.remote_qp);
          Set(x, kCaEntryLocalLid, e.local_lid);
          Set(x, kCaEntryRemoteLid, e.remote_lid);
          Set(x, kCaEntryTimestamp, e.timestamp);
        }
      }
      l.Clear();
      break;
    }
    case attr::kSwitchCongestionSetting:
      if (!sw) return bad(status::kBadMethodAttr);
      if (mod != 0) return bad(status::kBadAttrValue);
      if (set) cc.sw.Apply(ReadSwitchSetting(data));
      std::memset(data, 0, kGsDataBytes);
      FillSwitchSetting(cc.sw, data);
      break;
    case attr::kSwitchPortCongestionSetting: {
      if (!sw) return bad(status::kBadMethodAttr);
      int blocks = (d.mgmt_num_ports() + kPortsPerBlock) / kPortsPerBlock;  // ports 0..N
      if (mod >= static_cast<uint32_t>(blocks)) return bad(status::kBadAttrValue);
      if (set) ReadPortBlock(cc, static_cast<int>(mod), data);
      std::memset(data, 0, kGsDataBytes);
      FillPortBlock(cc, static_cast<int>(mod), data);
      break;
    }
    case attr::kCaCongestionSetting:
      if (sw) return bad(status::kBadMethodAttr);
      if (mod != 0) return bad(status::kBadAttrValue);
      if (set && !ApplyCaSetting(cc, data)) return bad(status::kBadAttrValue);
      std::memset(data, 0, kGsDataBytes);
      FillCaSetting(cc.ca, data);
      break;
    case attr::kCongestionControlTable:
      if (sw) return bad(status::kBadMethodAttr);
      if (mod >= static_cast<uint32_t>(CcState::kCctBlocks)) return bad(status::kBadAttrValue);
      if (set && !ApplyCctBlock(cc, static_cast<int>(mod), data)) return bad(status::kBadAttrValue);
      std::memset(data, 0, kGsDataBytes);
      FillCctBlock(cc, static_cast<int>(mod), data);
      break;
    case attr::kTimestamp:
      if (set) return bad(status::kBadMethodAttr);
      std::memset(data, 0, kGsDataBytes);
      Set(data, timestamp::kTimestamp,
          static_cast<uint64_t>(d.mgmt_now_ps() / kPsPerCcTick) & 0xFFFFFFFF);
      break;
    default:
      return bad(status::kBadMethodAttr);
  }
  MakeResponse(m, status::kOk);
  return AgentVerdict::kRespond;
}

}  // namespace ibemu::mgmt
