#include "emulator/mgmt/sma.h"

#include <algorithm>
#include <cstring>

#include "common/mad/smp_attributes.h"

namespace ibemu::mgmt {
namespace {

using namespace mad;

constexpr uint16_t kOk = status::kOk;

// A port as the requester names it: CA and router PortInfo with modifier 0 means "this port";
// a switch's port numbers are 0..N.
int ResolvePort(ManagedDevice& d, int in, uint32_t num) {
  if (!d.is_switch() && num == 0) return in;
  return static_cast<int>(num);
}

bool ValidPort(ManagedDevice& d, int p) {
  return d.is_switch() ? p >= 0 && p <= d.mgmt_num_ports() : p >= 1 && p <= d.mgmt_num_ports();
}

// The port whose M_Key guards this node's SMA: a CA's receiving port, a switch's port 0.
PortMgmt& KeyPort(ManagedDevice& d, int in) {
  return d.port_mgmt(d.is_switch() ? 0 : in);
}

uint16_t NodeInfoGet(ManagedDevice& d, int in, uint8_t* data) {
  const NodeMgmt& n = d.node_mgmt();
  Set(data, node_info::kBaseVersion, 1);
  Set(data, node_info::kClassVersion, 1);
  Set(data, node_info::kNodeType, n.node_type);
  Set(data, node_info::kNumPorts, static_cast<uint64_t>(d.mgmt_num_ports()));
  Set(data, node_info::kSystemGuid, n.system_guid);
  Set(data, node_info::kNodeGuid, n.node_guid);
  Set(data, node_info::kPortGuid, d.port_mgmt(d.is_switch() ? 0 : in).port_guid);
  Set(data, node_info::kPartitionCap, n.partition_cap);
  Set(data, node_info::kDeviceId, n.device_id);
  Set(data, node_info::kRevision, n.revision);
  Set(data, node_info::kLocalPortNum, static_cast<uint64_t>(in));
  Set(data, node_info::kVendorId, n.vendor_id);
  return kOk;
}

// LocalPortNum is the port the SMP arrived on, not the port described (IBA 14.2.5.6); discovery
// tools rely on it to tell which switch port leads back to them.
void PortInfoFill(ManagedDevice& d, int p, int in, uint8_t* data, bool hide_key) {
  using namespace port_info;
  const PortMgmt& pm = d.port_mgmt(p);
  // Switch port 0 reports the LID, SM and keys of the switch; its link fields are unused.
  std::memset(data, 0, kSmpDataBytes);
  Set(data, kMKey, hide_key ? 0 : pm.m_key);
  Set(data, kGidPrefix, pm.gid_prefix);
  Set(data, kLid, pm.lid);
  Set(data, kMasterSmLid, pm.sm_lid);
  Set(data, kCapabilityMask, pm.capability_mask);
  Set(data, kMKeyLeasePeriod, pm.m_key_lease_period);
  Set(data, kLocalPortNum, static_cast<uint64_t>(in));
  Set(data, kLinkWidthEnabled, pm.link_width_enabled);
  Set(data, kLinkWidthSupported, pm.link_width_supported);
  Set(data, kLinkWidthActive, pm.link_width_active);
  Set(data, kLinkSpeedSupported, pm.link_speed_supported);
  Set(data, kPortState, d.port_state(p));
  Set(data, kPortPhysicalState, d.phys_state(p));
  Set(data, kLinkDownDefaultState, pm.link_down_default);
  Set(data, kMKeyProtectBits, pm.m_key_protect);
  Set(data, kLmc, pm.lmc);
  Set(data, kLinkSpeedActive, pm.link_speed_active);
  Set(data, kLinkSpeedEnabled, pm.link_speed_enabled);
  Set(data, kNeighborMtu, pm.neighbor_mtu);
  Set(data, kMasterSmSl, pm.sm_sl);
  Set(data, kVlCap, pm.vl_cap);
  Set(data, kVlHighLimit, pm.vl_high_limit);
  Set(data, kVlArbHighCap, pm.vlarb_high_cap);
  Set(data, kVlArbLowCap, pm.vlarb_low_cap);
  Set(data, kMtuCap, pm.mtu_cap);
  Set(data, kVlStallCount, pm.vl_stall_count);
  Set(data, kHoqLife, pm.hoq_life);
  Set(data, kOperationalVls, pm.oper_vls);
  Set(data, kPartitionEnforcementInbound, pm.partition_enforcement_inbound);
  Set(data, kPartitionEnforcementOutbound, pm.partition_enforcement_outbound);
  Set(data, kFilterRawInbound, pm.filter_raw_inbound);
  Set(data, kFilterRawOutbound, pm.filter_raw_outbound);
  Set(data, kMKeyViolations, pm.m_key_violations);
  Set(data, kPKeyViolations, pm.p_key_violations);
  Set(data, kQKeyViolations, pm.q_key_violations);
  Set(data, kGuidCap, pm.guid_cap);
  Set(data, kClientReregister, pm.client_reregister);
  Set(data, kSubnetTimeout, pm.subnet_timeout);
  Set(data, kRespTimeValue, pm.resp_time_value);
  Set(data, kLocalPhyErrors, pm.local_phy_errors);
  Set(data, kOverrunErrors, pm.overrun_errors);
  Set(data, kCapabilityMask2, pm.capability_mask2);
  Set(data, kLinkSpeedExtActive, pm.link_speed_ext_active);
  Set(data, kLinkSpeedExtSupported, pm.link_speed_ext_supported);
  Set(data, kLinkSpeedExtEnabled, pm.link_speed_ext_enabled);
}

// Vol. 1 table 146: which PortState an SM may ask for from which state.
bool StateTransitionValid(uint8_t from, uint8_t to) {
  using namespace port_info;
  switch (to) {
    case kStateNoChange:
    case kStateDown:
      return true;
    case kStateArmed:
      return from == kStateInit || from == kStateArmed;
    case kStateActive:
      return from == kStateArmed || from == kStateActive;
    default:
      return false;
  }
}

uint16_t PortInfoSet(ManagedDevice& d, int p, const uint8_t* data) {
  using namespace port_info;
  PortMgmt& pm = d.port_mgmt(p);
  bool port0 = d.is_switch() && p == 0;
  uint8_t state = static_cast<uint8_t>(Get(data, kPortState));
  uint8_t phys = static_cast<uint8_t>(Get(data, kPortPhysicalState));
  uint8_t oper_vls = static_cast<uint8_t>(Get(data, kOperationalVls));
  uint8_t lmc = static_cast<uint8_t>(Get(data, kLmc));
  uint8_t mtu = static_cast<uint8_t>(Get(data, kNeighborMtu));
  // Validate everything before changing anything: a refused Set leaves the port as it was.
  if (!StateTransitionValid(d.port_state(p), state)) return status::kBadAttrValue;
  if (phys != kPhysNoChange && phys != kPhysPolling && phys != kPhysDisabled)
    return status::kBadAttrValue;
  if (!port0 && oper_vls > pm.vl_cap) return status::kBadAttrValue;
  if (!port0 && mtu != 0 && (mtu > pm.mtu_cap || mtu < 1)) return status::kBadAttrValue;
  if (lmc > 7) return status::kBadAttrValue;

  // LID, SM LID, LMC and keys belong to CA ports and to switch port 0 (IBA 14.2.5.6).
  if (!d.is_switch() || port0) {
    pm.m_key = Get(data, kMKey);
    pm.gid_prefix = Get(data, kGidPrefix);
    pm.lid = static_cast<uint16_t>(Get(data, kLid));
    pm.sm_lid = static_cast<uint16_t>(Get(data, kMasterSmLid));
    pm.m_key_lease_period = static_cast<uint16_t>(Get(data, kMKeyLeasePeriod));
    pm.m_key_protect = static_cast<uint8_t>(Get(data, kMKeyProtectBits));
    pm.lmc = lmc;
    pm.sm_sl = static_cast<uint8_t>(Get(data, kMasterSmSl));
    pm.subnet_timeout = static_cast<uint8_t>(Get(data, kSubnetTimeout));
    pm.client_reregister = Get(data, kClientReregister) != 0;
  }
  if (!port0) {
    uint8_t w = static_cast<uint8_t>(Get(data, kLinkWidthEnabled));
    if (w == 0xFF)
      pm.link_width_enabled = pm.link_width_supported;
    else if (w != 0)
      pm.link_width_enabled = w & pm.link_width_supported;
    uint8_t s = static_cast<uint8_t>(Get(data, kLinkSpeedEnabled));
    if (s == 0xF)
      pm.link_speed_enabled = pm.link_speed_supported;
    else if (s != 0)
      pm.link_speed_enabled = s & pm.link_speed_supported;
    if (mtu != 0) pm.neighbor_mtu = mtu;
    if (oper_vls != 0) pm.oper_vls = oper_vls;
    pm.vl_high_limit = static_cast<uint8_t>(Get(data, kVlHighLimit));
    pm.hoq_life = static_cast<uint8_t>(Get(data, kHoqLife));
    pm.vl_stall_count = static_cast<uint8_t>(Get(data, kVlStallCount));
    pm.partition_enforcement_inbound = Get(data, kPartitionEnforcementInbound) != 0;
    pm.partition_enforcement_outbound = Get(data, kPartitionEnforcementOutbound) != 0;
    pm.filter_raw_inbound = Get(data, kFilterRawInbound) != 0;
    pm.filter_raw_outbound = Get(data, kFilterRawOutbound) != 0;
    pm.local_phy_errors = static_cast<uint8_t>(Get(data, kLocalPhyErrors));
    pm.overrun_errors = static_cast<uint8_t>(Get(data, kOverrunErrors));
    uint8_t ldd = static_cast<uint8_t>(Get(data, kLinkDownDefaultState));
    if (ldd != 0) pm.link_down_default = ldd;
    d.PortInfoChanged(p);
    d.VlArbChanged(p);
  }
  // Writing 0 to a violation counter resets it (IBA 14.2.5.6).
  if (Get(data, kMKeyViolations) == 0) pm.m_key_violations = 0;
  if (Get(data, kPKeyViolations) == 0) pm.p_key_violations = 0;
  if (Get(data, kQKeyViolations) == 0) pm.q_key_violations = 0;
  if (state != kStateNoChange || phys != kPhysNoChange) d.RequestPortState(p, state, phys);
  return kOk;
}

uint16_t SwitchInfoSet(ManagedDevice& d, const uint8_t* data) {
  using namespace switch_info;
  SwitchMgmt& s = d.node_mgmt().sw;
  uint16_t top = static_cast<uint16_t>(Get(data, kLinearFdbTop));
  if (top >= s.linear_fdb_cap) return status::kBadAttrValue;
  s.linear_fdb_top = top;
  s.default_port = static_cast<uint8_t>(Get(data, kDefaultPort));
  s.life_time = static_cast<uint8_t>(Get(data, kLifeTimeValue));
  // PortStateChange is cleared by writing 1 (IBA 14.2.5.4).
  if (Get(data, kPortStateChange)) s.port_state_change = false;
  uint16_t mtop = static_cast<uint16_t>(Get(data, kMulticastFdbTop));
  if (mtop != 0) s.multicast_fdb_top = mtop;
  return kOk;
}

void SwitchInfoGet(ManagedDevice& d, uint8_t* data) {
  using namespace switch_info;
  const SwitchMgmt& s = d.node_mgmt().sw;
  Set(data, kLinearFdbCap, s.linear_fdb_cap);
  Set(data, kRandomFdbCap, 0);
  Set(data, kMulticastFdbCap, s.multicast_fdb_cap);
  Set(data, kLinearFdbTop, s.linear_fdb_top);
  Set(data, kDefaultPort, s.default_port);
  Set(data, kDefaultMulticastPrimaryPort, 0xFF);
  Set(data, kDefaultMulticastNotPrimaryPort, 0xFF);
  Set(data, kLifeTimeValue, s.life_time);
  Set(data, kPortStateChange, s.port_state_change);
  Set(data, kOptimizedSl2VlMapping, 0);
  Set(data, kLidsPerPort, 0);
  Set(data, kPartitionEnforcementCap, s.partition_enforcement_cap);
  Set(data, kInboundEnforcementCap, 1);
  Set(data, kOutboundEnforcementCap, 1);
  Set(data, kFilterRawInboundCap, 1);
  Set(data, kFilterRawOutboundCap, 1);
  Set(data, kEnhancedPort0, s.enhanced_port0);
  Set(data, kMulticastFdbTop, s.multicast_fdb_top);
}

uint16_t PKeyTable(ManagedDevice& d, int in, uint32_t mod, bool set, uint8_t* data) {
  int block = static_cast<int>(mod & 0xFFFF);
  int p = d.is_switch() ? static_cast<int>(mod >> 16) : in;
  if (!ValidPort(d, p)) return status::kBadAttrValue;
  PortMgmt& pm = d.port_mgmt(p);
  int first = block * pkey_table::kPKeysPerBlock;
  if (first >= static_cast<int>(pm.pkeys.size())) return status::kBadAttrValue;
  for (int i = 0; i < pkey_table::kPKeysPerBlock; ++i) {
    size_t k = static_cast<size_t>(first + i);
    if (k >= pm.pkeys.size()) break;
    if (set) pm.pkeys[k] = static_cast<uint16_t>(data[2 * i] << 8 | data[2 * i + 1]);
    data[2 * i] = static_cast<uint8_t>(pm.pkeys[k] >> 8);
    data[2 * i + 1] = static_cast<uint8_t>(pm.pkeys[k]);
  }
  return kOk;
}

uint16_t Sl2VlTable(ManagedDevice& d, int in, uint32_t mod, bool set, uint8_t* data) {
  int ip, op;
  if (d.is_switch()) {
    ip = static_cast<int>(mod >> 8 & 0xFF);
    op = static_cast<int>(mod & 0xFF);
    if (mod >> 16 || !ValidPort(d, ip) || !ValidPort(d, op)) return status::kBadAttrValue;
  } else {
    ip = op = in;
  }
  if (set) {
    for (int sl = 0; sl < 16; ++sl) {
      int vl = static_cast<int>(Get(data, sl2vl_table::VlOfSl(sl)));
      if (vl != policy::kVl15 && vl >= d.data_vls()) return status::kBadAttrValue;
    }
    for (int sl = 0; sl < 16; ++sl)
      d.SetSl2VlEntry(ip, op, sl, static_cast<int>(Get(data, sl2vl_table::VlOfSl(sl))));
  }
  std::memset(data, 0, kSmpDataBytes);
  for (int sl = 0; sl < 16; ++sl)
    Set(data, sl2vl_table::VlOfSl(sl), static_cast<uint64_t>(d.Sl2VlEntry(ip, op, sl)));
  return kOk;
}

uint16_t VlArbTable(ManagedDevice& d, int in, uint32_t mod, bool set, uint8_t* data) {
  int block = static_cast<int>(mod >> 16);
  int p = d.is_switch() ? static_cast<int>(mod & 0xFFFF) : in;
  if (block < vlarb_table::kLowFirst || block > vlarb_table::kHighSecond || !ValidPort(d, p) ||
      (d.is_switch() && p == 0))
    return status::kBadAttrValue;
  PortMgmt& pm = d.port_mgmt(p);
  auto& table = block <= vlarb_table::kLowSecond ? pm.vlarb_low : pm.vlarb_high;
  int first = (block - 1) % 2 * vlarb_table::kEntriesPerBlock;
  if (set) {
    for (int i = 0; i < vlarb_table::kEntriesPerBlock; ++i) {
      auto& e = table[first + i];
      e.vl = static_cast<uint8_t>(Get(data, vlarb_table::Vl(i)));
      e.weight = static_cast<uint8_t>(Get(data, vlarb_table::Weight(i)));
    }
    d.VlArbChanged(p);
  }
  std::memset(data, 0, kSmpDataBytes);
  for (int i = 0; i < vlarb_table::kEntriesPerBlock; ++i) {
    Set(data, vlarb_table::Vl(i), table[first + i].vl);
    Set(data, vlarb_table::Weight(i), table[first + i].weight);
  }
  return kOk;
}

uint16_t LftBlock(ManagedDevice& d, uint32_t mod, bool set, uint8_t* data) {
  uint32_t first = mod * lft::kLidsPerBlock;
  if (mod >> 16 || first >= d.node_mgmt().sw.linear_fdb_cap) return status::kBadAttrValue;
  for (int i = 0; i < lft::kLidsPerBlock; ++i) {
    if (set) d.SetLftEntry(first + i, data[i]);
    data[i] = d.LftEntry(first + i);
  }
  return kOk;
}

uint16_t MftBlock(ManagedDevice& d, uint32_t mod, bool set, uint8_t* data) {
  SwitchMgmt& s = d.node_mgmt().sw;
  int position = static_cast<int>(mod >> 28);
  int block = static_cast<int>(mod & 0x1FF);
  int positions = (d.mgmt_num_ports() + 16) / 16;
  if (position >= positions || (block + 1) * mft::kMlidsPerBlock > s.multicast_fdb_cap)
    return status::kBadAttrValue;
  if (s.mft.empty()) s.mft.assign(s.multicast_fdb_cap, std::vector<uint16_t>(positions, 0));
  for (int i = 0; i < mft::kMlidsPerBlock; ++i) {
    uint16_t& m = s.mft[static_cast<size_t>(block * mft::kMlidsPerBlock + i)][position];
    if (set) m = static_cast<uint16_t>(data[2 * i] << 8 | data[2 * i + 1]);
    data[2 * i] = static_cast<uint8_t>(m >> 8);
    data[2 * i + 1] = static_cast<uint8_t>(m);
  }
  return kOk;
}

}  // namespace

void MakeResponse(MadView m, uint16_t st) {
  m.set_method(method::kGetResp);
  if (m.is_dr()) {
    m.set_direction(true);
    Set(m.b, hdr::kDrStatus, st & 0x7FFF);
  } else {
    Set(m.b, hdr::kStatus, st);
  }
}

std::optional<AgentVerdict> CheckRequest(MadView m, uint8_t class_version) {
  uint8_t meth = m.method();
  // Traps and their represses are for a manager on this port, not for the agent.
  if (m.is_response() || meth == method::kTrapRepress || meth == method::kTrap)
    return AgentVerdict::kNotMine;
  if (m.base_version() != 1 || m.class_version() != class_version) {
    MakeResponse(m, status::kBadVersion);
    return AgentVerdict::kRespond;
  }
  if (meth != method::kGet && meth != method::kSet) {
    MakeResponse(m, status::kBadMethod);
    return AgentVerdict::kRespond;
  }
  return std::nullopt;
}

MadAddress FromQp1(uint16_t lid, uint16_t dlid, uint32_t dest_qp, uint8_t sl, uint32_t qkey,
                   uint16_t pkey) {
  MadAddress r;
  r.slid = lid;
  r.dlid = dlid;
  r.sl = sl;
  r.src_qp = 1;
  r.dest_qp = dest_qp;
  r.qkey = qkey;
  r.pkey = pkey;
  return r;
}

MadAddress GsResponseAddress(const MadAddress& req, uint16_t lid) {
  return FromQp1(lid, req.slid, req.src_qp, req.sl, kQp1QKey, req.pkey);
}

policy::VlArbConfig VlArbConfigOf(const PortMgmt& pm, const policy::VlArbConfig& base,
                                  int data_vls) {
  policy::VlArbConfig vc = base;
  vc.data_vls = data_vls;
  vc.high.assign(pm.vlarb_high.begin(), pm.vlarb_high.begin() + pm.vlarb_high_cap);
  vc.low.assign(pm.vlarb_low.begin(), pm.vlarb_low.begin() + pm.vlarb_low_cap);
  vc.limit_of_high_priority = pm.vl_high_limit;
  return vc;
}

AgentVerdict HandleSmp(ManagedDevice& d, int in, MadView m) {
  if (m.method() == method::kTrap || m.attr_id() == attr::kSmInfo) return AgentVerdict::kNotMine;
  if (auto v = CheckRequest(m, 1)) return *v;
  bool set = m.method() == method::kSet;
  // M_Key (IBA 14.2.4): with a non-zero key that does not match, protection level 0 and 1 let
  // Gets through (level 1 hides the key) and drop Sets; levels 2 and 3 drop everything.
  PortMgmt& kp = KeyPort(d, in);
  bool hide_key = false;
  if (kp.m_key != 0 && Get(m.b, hdr::kMKey) != kp.m_key) {
    if (set || kp.m_key_protect >= 2) {
      if (kp.m_key_violations != 0xFFFF) ++kp.m_key_violations;
      return AgentVerdict::kDrop;
    }
    hide_key = kp.m_key_protect == 1;
  }
  uint8_t* data = m.smp_data();
  uint32_t mod = m.attr_mod();
  uint16_t st = kOk;
  switch (m.attr_id()) {
    case attr::kNodeInfo:
      st = set ? status::kBadMethodAttr : NodeInfoGet(d, in, data);
      break;
    case attr::kNodeDescription:
      if (set) {
        st = status::kBadMethodAttr;
      } else {
        std::memset(data, 0, kSmpDataBytes);
        const std::string& s = d.node_mgmt().description;
        std::memcpy(data, s.data(), std::min<size_t>(s.size(), kSmpDataBytes));
      }
      break;
    case attr::kSwitchInfo:
      if (!d.is_switch()) {
        st = status::kBadMethodAttr;
        break;
      }
      if (set) st = SwitchInfoSet(d, data);
      if (st == kOk) SwitchInfoGet(d, data);
      break;
    case attr::kGuidInfo: {
      int p = d.is_switch() ? 0 : in;
      if (mod != 0) {
        st = status::kBadAttrValue;
        break;
      }
      // One GUID per port (GUIDCap 1); a Set of entry 0 cannot change the port GUID.
      std::memset(data, 0, kSmpDataBytes);
      Set(data, guid_info::kGuid0, d.port_mgmt(p).port_guid);
      break;
    }
    case attr::kPortInfo: {
      int p = ResolvePort(d, in, mod & 0xFF);
      if ((mod & 0x7FFFFF00u) != 0 || !ValidPort(d, p)) {
        st = status::kBadAttrValue;
        break;
      }
      if (set) st = PortInfoSet(d, p, data);
      if (st == kOk) PortInfoFill(d, p, in, data, hide_key);
      break;
    }
    case attr::kPKeyTable:
      st = PKeyTable(d, in, mod, set, data);
      break;
    case attr::kSl2VlTable:
      st = Sl2VlTable(d, in, mod, set, data);
      break;
    case attr::kVlArbTable:
      st = VlArbTable(d, in, mod, set, data);
      break;
    case attr::kLinearForwardingTable:
      st = d.is_switch() ? LftBlock(d, mod, set, data) : status::kBadMethodAttr;
      break;
    case attr::kMulticastForwardingTable:
      st = d.is_switch() ? MftBlock(d, mod, set, data) : status::kBadMethodAttr;
      break;
    case attr::kMlnxExtPortInfo: {
      int p = ResolvePort(d, in, mod & 0xFF);
      if ((mod & 0xFFFFFF00u) != 0 || !ValidPort(d, p)) {
        st = status::kBadAttrValue;
        break;
      }
      auto& raw = d.port_mgmt(p).mlnx_ext_port_info;
      if (set) std::memcpy(raw.data(), data, raw.size());
      std::memcpy(data, raw.data(), raw.size());
      break;
    }
    default:
      st = status::kBadMethodAttr;
  }
  MakeResponse(m, st);
  return AgentVerdict::kRespond;
}

}  // namespace ibemu::mgmt
