#include "emulator/mgmt/pma.h"

#include <algorithm>
#include <cstring>

#include "common/mad/gs_attributes.h"

namespace ibemu::mgmt {
namespace {

using namespace mad;

uint64_t Saturate(uint64_t v, int bits) {
  uint64_t max = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return std::min(v, max);
}

// Counters since the last clear.
PortCounters Since(ManagedDevice& d, int p) {
  PortCounters r = d.CountersNow(p);
  ForEachCounter(r, d.port_mgmt(p).baseline, [](uint64_t& x, uint64_t b) { x -= b; });
  return r;
}

// The ports PortSelect names: one port, or all of a switch's (0xFF, AllPortSelect). A CA treats
// PortSelect 0 as the port the MAD arrived on (perfquery sends 0 when no port is given).
bool SelectPorts(ManagedDevice& d, int in, int sel, int* first, int* last) {
  if (sel == 0xFF) {
    if (!d.is_switch()) return false;
    *first = 1;
    *last = d.mgmt_num_ports();
    return true;
  }
  if (!d.is_switch() && sel == 0) sel = in;
  if (sel < 1 || sel > d.mgmt_num_ports()) return false;
  *first = *last = sel;
  return true;
}

void Clear(PortMgmt& pm, const PortCounters& c, uint32_t select, uint32_t select2, bool extended,
           bool per_sl, bool xmit_sl) {
  PortCounters& b = pm.baseline;
  if (per_sl) {
    auto& to = xmit_sl ? b.xmit_data_sl : b.rcv_data_sl;
    const auto& from = xmit_sl ? c.xmit_data_sl : c.rcv_data_sl;
    for (int sl = 0; sl < 16; ++sl)
      if (select >> sl & 1) to[sl] = from[sl];
    return;
  }
  if (extended) {
    if (select & 1) b.xmit_data = c.xmit_data;
    if (select & 2) b.rcv_data = c.rcv_data;
    if (select & 4) b.xmit_pkts = c.xmit_pkts;
    if (select & 8) b.rcv_pkts = c.rcv_pkts;
    if (select & 0x10) b.unicast_xmit_pkts = c.unicast_xmit_pkts;
    if (select & 0x20) b.unicast_rcv_pkts = c.unicast_rcv_pkts;
    if (select & 0x40) b.multicast_xmit_pkts = c.multicast_xmit_pkts;
    if (select & 0x80) b.multicast_rcv_pkts = c.multicast_rcv_pkts;
    // CounterSelect2 of the extended attribute: the 64-bit error counters, in field order.
    if (select2 & 1) b.symbol_errors = c.symbol_errors;
    if (select2 & 2) b.link_error_recovery = c.link_error_recovery;
    if (select2 & 4) b.link_downed = c.link_downed;
    if (select2 & 8) b.rcv_errors = c.rcv_errors;
    if (select2 & 0x20) b.rcv_switch_relay_errors = c.rcv_switch_relay_errors;
    if (select2 & 0x40) b.xmit_discards = c.xmit_discards;
    if (select2 & 0x80) b.xmit_constraint_errors = c.xmit_constraint_errors;
    if (select2 & 0x100) b.rcv_constraint_errors = c.rcv_constraint_errors;
    if (select2 & 0x400) b.vl15_dropped = c.vl15_dropped;
    if (select2 & 0x800) b.xmit_wait = c.xmit_wait;
    return;
  }
  // PortCounters CounterSelect (IBA table 247 order).
  if (select & 0x0001) b.symbol_errors = c.symbol_errors;
  if (select & 0x0002) b.link_error_recovery = c.link_error_recovery;
  if (select & 0x0004) b.link_downed = c.link_downed;
  if (select & 0x0008) b.rcv_errors = c.rcv_errors;
  if (select & 0x0020) b.rcv_switch_relay_errors = c.rcv_switch_relay_errors;
  if (select & 0x0040) b.xmit_discards = c.xmit_discards;
  if (select & 0x0080) b.xmit_constraint_errors = c.xmit_constraint_errors;
  if (select & 0x0100) b.rcv_constraint_errors = c.rcv_constraint_errors;
  if (select & 0x0800) b.vl15_dropped = c.vl15_dropped;
  if (select & 0x1000) b.xmit_data = c.xmit_data;
  if (select & 0x2000) b.rcv_data = c.rcv_data;
  if (select & 0x4000) b.xmit_pkts = c.xmit_pkts;
  if (select & 0x8000) b.rcv_pkts = c.rcv_pkts;
  if (select2 & 0x01) b.xmit_wait = c.xmit_wait;
}

void FillCounters(const PortCounters& c, int sel, uint8_t* data) {
  using namespace port_counters;
  Set(data, kSymbolErrorCounter, Saturate(c.symbol_errors, 16));
  Set(data, kLinkErrorRecoveryCounter, Saturate(c.link_error_recovery, 8));
  Set(data, kLinkDownedCounter, Saturate(c.link_downed, 8));
  Set(data, kPortRcvErrors, Saturate(c.rcv_errors, 16));
  Set(data, kPortRcvSwitchRelayErrors, Saturate(c.rcv_switch_relay_errors, 16));
  Set(data, kPortXmitDiscards, Saturate(c.xmit_discards, 16));
  Set(data, kPortXmitConstraintErrors, Saturate(c.xmit_constraint_errors, 8));
  Set(data, kPortRcvConstraintErrors, Saturate(c.rcv_constraint_errors, 8));
  Set(data, kVl15Dropped, Saturate(c.vl15_dropped, 16));
  // Data counters are in 4-octet words (IBA 16.1.3.5); all of them stop at all ones.
  Set(data, kPortXmitData, Saturate(c.xmit_data / 4, 32));
  Set(data, kPortRcvData, Saturate(c.rcv_data / 4, 32));
  Set(data, kPortXmitPkts, Saturate(c.xmit_pkts, 32));
  Set(data, kPortRcvPkts, Saturate(c.rcv_pkts, 32));
  Set(data, kPortXmitWait, Saturate(c.xmit_wait, 32));
  Set(data, kPortSelect, static_cast<uint64_t>(sel));
}

void FillExtended(const PortCounters& c, int sel, uint8_t* data) {
  using namespace port_counters_ext;
  Set(data, kPortSelect, static_cast<uint64_t>(sel));
  Set(data, kPortXmitData, c.xmit_data / 4);
  Set(data, kPortRcvData, c.rcv_data / 4);
  Set(data, kPortXmitPkts, c.xmit_pkts);
  Set(data, kPortRcvPkts, c.rcv_pkts);
  Set(data, kPortUnicastXmitPkts, c.unicast_xmit_pkts);
  Set(data, kPortUnicastRcvPkts, c.unicast_rcv_pkts);
  Set(data, kPortMulticastXmitPkts, c.multicast_xmit_pkts);
  Set(data, kPortMulticastRcvPkts, c.multicast_rcv_pkts);
  Set(data, kSymbolErrorCounter, c.symbol_errors);
  Set(data, kLinkErrorRecoveryCounter, c.link_error_recovery);
  Set(data, kLinkDownedCounter, c.link_downed);
  Set(data, kPortRcvErrors, c.rcv_errors);
  Set(data, kPortRcvSwitchRelayErrors, c.rcv_switch_relay_errors);
  Set(data, kPortXmitDiscards, c.xmit_discards);
  Set(data, kPortXmitConstraintErrors, c.xmit_constraint_errors);
  Set(data, kPortRcvConstraintErrors, c.rcv_constraint_errors);
  Set(data, kVl15Dropped, c.vl15_dropped);
  Set(data, kPortXmitWait, c.xmit_wait);
}

}  // namespace

AgentVerdict HandlePerf(ManagedDevice& d, int in, MadView m) {
  if (auto v = CheckRequest(m, 1)) return *v;
  bool set = m.method() == method::kSet;
  uint8_t* data = m.gs_data();
  uint16_t st = status::kOk;
  uint16_t id = m.attr_id();
  if (id == attr::kClassPortInfo) {
    if (set) {
      st = status::kBadMethodAttr;
    } else {
      std::memset(data, 0, kGsDataBytes);
      using namespace class_port_info;
      Set(data, kBaseVersion, 1);
      Set(data, kClassVersion, 1);
      uint16_t cap = kPmExtendedWidth | kPmXmitWait;
      if (d.is_switch()) cap |= kPmAllPortSelect;
      Set(data, kCapabilityMask, cap);
      Set(data, kRespTimeValue, 0x10);
    }
    MakeResponse(m, st);
    return AgentVerdict::kRespond;
  }
  if (id != attr::kPortCounters && id != attr::kPortCountersExtended &&
      id != attr::kPortXmitDataSl && id != attr::kPortRcvDataSl) {
    MakeResponse(m, status::kBadMethodAttr);
    return AgentVerdict::kRespond;
  }
  int sel = static_cast<int>(Get(data, port_counters::kPortSelect));
  int first = 0, last = 0;
  if (m.attr_mod() != 0 || !SelectPorts(d, in, sel, &first, &last)) {
    MakeResponse(m, status::kBadAttrValue);
    return AgentVerdict::kRespond;
  }
  bool per_sl = id == attr::kPortXmitDataSl || id == attr::kPortRcvDataSl;
  bool extended = id == attr::kPortCountersExtended;
  if (set) {
    uint32_t select = static_cast<uint32_t>(Get(data, port_counters::kCounterSelect));
    uint32_t select2 = extended
                           ? static_cast<uint32_t>(Get(data, port_counters_ext::kCounterSelect2))
                           : static_cast<uint32_t>(Get(data, port_counters::kCounterSelect2));
    for (int p = first; p <= last; ++p)
      Clear(d.port_mgmt(p), d.CountersNow(p), select, select2, extended, per_sl,
            id == attr::kPortXmitDataSl);
  }
  PortCounters sum;
  for (int p = first; p <= last; ++p)
    ForEachCounter(sum, Since(d, p), [](uint64_t& x, uint64_t y) { x += y; });
  std::memset(data, 0, kGsDataBytes);
  if (per_sl) {
    Set(data, port_data_sl::kPortSelect, static_cast<uint64_t>(sel));
    const auto& v = id == attr::kPortXmitDataSl ? sum.xmit_data_sl : sum.rcv_data_sl;
    for (int sl = 0; sl < 16; ++sl) Set(data, port_data_sl::Sl(sl), Saturate(v[sl] / 4, 32));
  } else if (extended) {
    FillExtended(sum, sel, data);
  } else {
    FillCounters(sum, sel, data);
  }
  MakeResponse(m, status::kOk);
  return AgentVerdict::kRespond;
}

}  // namespace ibemu::mgmt
