#include "emulator/mgmt/cca.h"

#include <algorithm>
#include <cstring>

#include "common/mad/cc_settings.h"
#include "common/mad/gs_attributes.h"
#include "common/mad/smp_attributes.h"

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

void FillPortBlock(const CcState& cc, int block, uint8_t* data) {
  using namespace switch_port_congestion_setting;
  for (int i = 0; i < kPortsPerBlock; ++i) {
    size_t port = static_cast<size_t>(block * kPortsPerBlock + i);
    if (port >= cc.ports.size()) break;
    EncodePortElement(cc.ports[port], data + i * kElementBytes);
  }
}

void ReadPortBlock(CcState& cc, int block, const uint8_t* data) {
  using namespace switch_port_congestion_setting;
  for (int i = 0; i < kPortsPerBlock; ++i) {
    size_t port = static_cast<size_t>(block * kPortsPerBlock + i);
    if (port >= cc.ports.size()) break;
    cc.ports[port] = DecodePortElement(data + i * kElementBytes);
  }
}

// A CACongestionSetting Set: refused if a CCTI_Min it sets could never be reached.
bool ApplyCaSetting(CcState& cc, uint8_t* data) {
  CaCongestionSetting w = DecodeCaSetting(data);
  if (w.SlWithCctiMinAbove(cc.ccti_limit) >= 0) return false;
  cc.ca.Apply(w);
  return true;
}

// A CCT block: CCTI_Limit is the last valid index of the whole table, so it must fit the table
// and the block must not lie wholly beyond it (IBA A10.4.3.9).
bool ApplyCctBlock(CcState& cc, int block, const uint8_t* data) {
  using namespace congestion_control_table;
  uint64_t limit = Get(data, kCctiLimit);
  if (limit >= cc.cct.size()) return false;
  if (limit != 0 && static_cast<uint64_t>(block) * kEntriesPerBlock > limit) return false;
  cc.ccti_limit = DecodeCctBlock(data, &cc.cct[static_cast<size_t>(block * kEntriesPerBlock)]);
  return true;
}

// A refused MAD becomes the Bad CC_Key trap, in place: a Notice (type Security, trap 0) whose
// details name the requester, what it tried and the key it gave. Without a TrapLID it is dropped.
AgentVerdict BadCcKeyTrap(ManagedDevice& d, int in, CcState& cc, MadView m,
                          const MadAddress& from) {
  if (cc.trap.lid == 0) return AgentVerdict::kDrop;
  uint8_t tried = m.method();
  uint16_t attr_id = m.attr_id();
  uint32_t attr_mod = m.attr_mod();
  uint64_t key = Get(m.b, hdr::kCcKey);
  std::memset(m.b, 0, kMadBytes);
  Set(m.b, hdr::kBaseVersion, 1);
  Set(m.b, hdr::kMgmtClass, mgmt_class::kCongestion);
  Set(m.b, hdr::kClassVersion, 2);
  Set(m.b, hdr::kMethod, method::kTrap);
  Set(m.b, hdr::kTid, ++cc.traps_sent);
  Set(m.b, hdr::kAttrId, attr::kNotice);
  Set(m.b, hdr::kCcKey, cc.key.key);
  uint8_t* n = m.gs_data();
  uint16_t own = d.port_mgmt(d.is_switch() ? 0 : in).lid;
  Set(n, notice::kIsGeneric, 1);
  Set(n, notice::kType, notice::kTypeSecurity);
  Set(n, notice::kProducerType, d.is_switch() ? node_info::kTypeSwitch : node_info::kTypeCa);
  Set(n, notice::kTrapNumber, cc_notice::kTrapBadCcKey);
  Set(n, notice::kIssuerLid, own);
  Set(n, cc_notice::kSlid, from.slid);
  Set(n, cc_notice::kMethod, tried);
  Set(n, cc_notice::kAttrId, attr_id);
  Set(n, cc_notice::kAttrMod, attr_mod);
  Set(n, cc_notice::kQp, from.src_qp);
  Set(n, cc_notice::kCcKey, key);
  return AgentVerdict::kTrap;
}

void FillClassPortInfo(const CcTrapTarget& t, uint8_t* data) {
  using namespace class_port_info;
  std::memset(data, 0, kGsDataBytes);
  Set(data, kBaseVersion, 1);
  Set(data, kClassVersion, 2);
  Set(data, kRespTimeValue, 0x10);
  Set(data, kTrapSl, t.sl);
  Set(data, kTrapLid, t.lid);
  Set(data, kTrapPKey, t.pkey);
  Set(data, kTrapHl, 0xFF);
  Set(data, kTrapQp, t.qp);
  Set(data, kTrapQKey, t.qkey);
}

}  // namespace

MadAddress TrapAddress(const CcTrapTarget& t, uint16_t own_lid) {
  return FromQp1(own_lid, t.lid, t.qp, t.sl, t.qkey, t.pkey);
}

AgentVerdict HandleCongestion(ManagedDevice& d, int in, MadView m, const MadAddress& from) {
  if (auto v = CheckRequest(m, 2)) return *v;
  CcState& cc = d.cc_state(in);
  KeyCheck key = CheckCcKey(cc.key, m, d.mgmt_now_ps());
  if (key == KeyCheck::kRefuse) return BadCcKeyTrap(d, in, cc, m, from);
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
      // A manager sets where traps go; the rest of ClassPortInfo is the agent's to say.
      if (set) {
        using namespace class_port_info;
        cc.trap.sl = static_cast<uint8_t>(Get(data, kTrapSl));
        cc.trap.lid = static_cast<uint16_t>(Get(data, kTrapLid));
        cc.trap.pkey = static_cast<uint16_t>(Get(data, kTrapPKey));
        cc.trap.qp = static_cast<uint32_t>(Get(data, kTrapQp));
        cc.trap.qkey = static_cast<uint32_t>(Get(data, kTrapQKey));
      }
      FillClassPortInfo(cc.trap, data);
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
        // Writing 0 clears the count; any other value leaves it (A10.4.3.2, as ibccconfig
        // reads the spec), so a manager that rewrites the key loses no violations.
        if (Get(data, kCcKeyViolations) == 0) cc.key.violations = 0;
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
      if (set) cc.sw.Apply(DecodeSwitchSetting(data));
      std::memset(data, 0, kGsDataBytes);
      EncodeSwitchSetting(cc.sw, data);
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
      EncodeCaSetting(cc.ca, data);
      break;
    case attr::kCongestionControlTable:
      if (sw) return bad(status::kBadMethodAttr);
      if (mod >= static_cast<uint32_t>(CcState::kCctBlocks)) return bad(status::kBadAttrValue);
      if (set && !ApplyCctBlock(cc, static_cast<int>(mod), data)) return bad(status::kBadAttrValue);
      std::memset(data, 0, kGsDataBytes);
      EncodeCctBlock(cc.ccti_limit, cc.cct.data(), cc.cct.size(), static_cast<int>(mod), data);
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
