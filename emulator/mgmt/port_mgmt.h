// What a port's subnet management agent stores (IBA 14.2.5.6 PortInfo, P_KeyTable,
// VLArbitrationTable) and what a node's SMA reports about the node (NodeInfo, NodeDescription,
// SwitchInfo). The data plane reads the parts that steer packets (state, LID, tables) from here,
// so an SMP Set takes effect on the next packet.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "emulator/policy/vl_arbiter.h"

namespace ibemu::mgmt {

// Counters as the PMA reports them: octets and packets of data packets (not link packets),
// errors and discards. The PMA keeps a baseline per counter so that a clear (CounterSelect) does
// not disturb the emulator's own results. The totals of data octets and packets, the per-SL
// octets, LinkDowned and PortXmitWait are the link layer's (link::PortStats), filled in by
// ManagedDevice::CountersNow; the device counts the rest here.
struct PortCounters {
  uint64_t xmit_data = 0, rcv_data = 0;  // octets from LRH through VCRC (PMA divides by 4)
  uint64_t xmit_pkts = 0, rcv_pkts = 0;
  uint64_t unicast_xmit_pkts = 0, unicast_rcv_pkts = 0;  // every packet is unicast for now
  uint64_t multicast_xmit_pkts = 0, multicast_rcv_pkts = 0;
  uint64_t xmit_discards = 0;            // packets dropped at this output (port down, no route)
  uint64_t rcv_switch_relay_errors = 0;  // arrived here, could not be forwarded
  uint64_t rcv_errors = 0;               // malformed packets
  // Partition enforcement (IBA 10.9.3): packets whose P_Key the port's table refuses.
  uint64_t xmit_constraint_errors = 0, rcv_constraint_errors = 0;
  uint64_t vl15_dropped = 0;
  uint64_t xmit_wait = 0;  // ticks with data to send and none sent (link::Device::XmitWait)
  uint64_t link_downed = 0;
  uint64_t symbol_errors = 0, link_error_recovery = 0;
  std::array<uint64_t, 16> xmit_data_sl{}, rcv_data_sl{};  // octets per SL
};

// Applies fn(a.x, b.x) to every counter x, for arithmetic that treats them all alike.
template <typename Fn>
void ForEachCounter(PortCounters& a, const PortCounters& b, Fn fn) {
  static constexpr uint64_t PortCounters::*kScalars[] = {&PortCounters::xmit_data,
                                                         &PortCounters::rcv_data,
                                                         &PortCounters::xmit_pkts,
                                                         &PortCounters::rcv_pkts,
                                                         &PortCounters::unicast_xmit_pkts,
                                                         &PortCounters::unicast_rcv_pkts,
                                                         &PortCounters::multicast_xmit_pkts,
                                                         &PortCounters::multicast_rcv_pkts,
                                                         &PortCounters::xmit_discards,
                                                         &PortCounters::rcv_switch_relay_errors,
                                                         &PortCounters::rcv_errors,
                                                         &PortCounters::vl15_dropped,
                                                         &PortCounters::xmit_wait,
                                                         &PortCounters::link_downed,
                                                         &PortCounters::symbol_errors,
                                                         &PortCounters::link_error_recovery,
                                                         &PortCounters::xmit_constraint_errors,
                                                         &PortCounters::rcv_constraint_errors};
  for (auto m : kScalars) fn(a.*m, b.*m);
  for (int sl = 0; sl < 16; ++sl) {
    fn(a.xmit_data_sl[sl], b.xmit_data_sl[sl]);
    fn(a.rcv_data_sl[sl], b.rcv_data_sl[sl]);
  }
}

struct PortMgmt {
  // PortInfo
  uint64_t m_key = 0;
  uint64_t gid_prefix = 0xFE80000000000000ull;
  uint16_t lid = 0;
  uint16_t sm_lid = 0;
  uint32_t capability_mask = 0;
  uint16_t m_key_lease_period = 0;
  uint8_t m_key_protect = 0;
  uint8_t lmc = 0;
  uint8_t link_width_enabled = 0, link_width_supported = 0, link_width_active = 0;
  uint8_t link_speed_supported = 0, link_speed_enabled = 0, link_speed_active = 0;
  uint8_t link_speed_ext_supported = 0, link_speed_ext_enabled = 0, link_speed_ext_active = 0;
  uint8_t link_down_default = 2;
  uint8_t neighbor_mtu = 4;  // 2048
  uint8_t mtu_cap = 5;       // 4096
  uint8_t sm_sl = 0;
  uint8_t vl_cap = 1;
  uint8_t oper_vls = 1;
  uint8_t vl_high_limit = 0;
  uint8_t vlarb_high_cap = 8, vlarb_low_cap = 8;
  uint8_t vl_stall_count = 0;
  uint8_t hoq_life = 0x13;
  bool partition_enforcement_inbound = false, partition_enforcement_outbound = false;
  bool filter_raw_inbound = false, filter_raw_outbound = false;
  uint16_t m_key_violations = 0, p_key_violations = 0, q_key_violations = 0;
  uint8_t guid_cap = 1;
  bool client_reregister = false;
  uint8_t subnet_timeout = 0;
  uint8_t resp_time_value = 0x10;
  uint8_t local_phy_errors = 8, overrun_errors = 8;
  uint16_t capability_mask2 = 0;
  uint64_t port_guid = 0;

  // P_KeyTable (PartitionCap entries; entry 0 is the default full-member key).
  std::vector<uint16_t> pkeys;
  // VLArbitrationTable, 64 entries each, and the SL2VL of a CA port.
  std::array<policy::VlArbEntry, 64> vlarb_low{}, vlarb_high{};
  std::array<uint8_t, 16> sl2vl{};

  // MlnxExtPortInfo, stored as written (all zero: no FDR10, no vendor extensions in use).
  std::array<uint8_t, 64> mlnx_ext_port_info{};

  PortCounters counters;
  PortCounters baseline;  // subtracted when reported; set by a PMA clear

  // Whether a table entry accepts a packet's P_Key: equal low 15 bits (not zero) and at least
  // one full member (IBA 10.9.3).
  static bool PKeyMatches(uint16_t entry, uint16_t pkey) {
    return (entry & 0x7FFF) && (entry & 0x7FFF) == (pkey & 0x7FFF) && ((entry | pkey) & 0x8000);
  }
  // Whether any entry of the table does.
  bool AcceptsPKey(uint16_t pkey) const {
    for (uint16_t k : pkeys)
      if (PKeyMatches(k, pkey)) return true;
    return false;
  }

  // The index a receive completion names for a packet carrying `pkey` (the kernel's
  // ib_find_cached_pkey): the first entry with the same low 15 bits that is a full member, else
  // the last such limited one, else 0.
  uint16_t PKeyIndex(uint16_t pkey) const {
    int limited = -1;
    for (size_t i = 0; i < pkeys.size(); ++i) {
      if ((pkeys[i] & 0x7FFF) != (pkey & 0x7FFF)) continue;
      if (pkeys[i] & 0x8000) return static_cast<uint16_t>(i);
      limited = static_cast<int>(i);
    }
    return limited < 0 ? 0 : static_cast<uint16_t>(limited);
  }

  // Whether `dlid` addresses this port: its base LID with the low LMC bits free (IBA 7.11.1).
  bool OwnsLid(uint16_t dlid) const {
    uint16_t mask = static_cast<uint16_t>(~((1u << lmc) - 1));
    return lid != 0 && (dlid & mask) == lid;
  }
};

struct SwitchMgmt {
  uint16_t linear_fdb_cap = 49152;
  uint16_t multicast_fdb_cap = 1024;
  uint16_t linear_fdb_top = 0;
  uint8_t default_port = 0;
  uint8_t life_time = 18;
  bool port_state_change = false;
  uint16_t partition_enforcement_cap = 64;
  uint16_t multicast_fdb_top = 0xBFFF;  // none in use
  bool enhanced_port0 = true;
  // Multicast forwarding: a port mask per MLID from 0xC000, 16 bits per position group.
  std::vector<std::vector<uint16_t>> mft;  // [mlid - 0xC000][position]
};

struct NodeMgmt {
  uint8_t node_type = 1;  // CA
  uint64_t node_guid = 0;
  uint64_t system_guid = 0;
  uint16_t partition_cap = 64;
  uint16_t device_id = 0x1003;
  uint32_t revision = 0x1;
  uint32_t vendor_id = 0x0002C9;
  std::string description;
  SwitchMgmt sw;
};

}  // namespace ibemu::mgmt
