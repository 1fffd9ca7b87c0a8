#include "common/mad/attribute_table.h"

#include <cstdio>

#include "common/mad/gs_attributes.h"
#include "common/mad/mad_header.h"
#include "common/mad/smp_attributes.h"

namespace ibemu::mad {
namespace {

using mgmt_class::kCongestion;
using mgmt_class::kPerf;
using mgmt_class::kSubnLid;

const AttributeLayout kTable[] = {
    {"NodeDescription", kSubnLid, attr::kNodeDescription, kSmpDataOffset, kSmpDataBytes,
     node_description::kAll},
    {"NodeInfo", kSubnLid, attr::kNodeInfo, kSmpDataOffset, kSmpDataBytes, node_info::kAll},
    {"SwitchInfo", kSubnLid, attr::kSwitchInfo, kSmpDataOffset, kSmpDataBytes, switch_info::kAll},
    {"GUIDInfo", kSubnLid, attr::kGuidInfo, kSmpDataOffset, kSmpDataBytes, {}},
    {"PortInfo", kSubnLid, attr::kPortInfo, kSmpDataOffset, kSmpDataBytes, port_info::kAll},
    {"P_KeyTable", kSubnLid, attr::kPKeyTable, kSmpDataOffset, kSmpDataBytes, {}},
    {"SLtoVLMappingTable", kSubnLid, attr::kSl2VlTable, kSmpDataOffset, 8, {}},
    {"VLArbitrationTable", kSubnLid, attr::kVlArbTable, kSmpDataOffset, kSmpDataBytes, {}},
    {"LinearForwardingTable",
     kSubnLid,
     attr::kLinearForwardingTable,
     kSmpDataOffset,
     kSmpDataBytes,
     {}},
    {"MulticastForwardingTable",
     kSubnLid,
     attr::kMulticastForwardingTable,
     kSmpDataOffset,
     kSmpDataBytes,
     {}},
    {"SMInfo", kSubnLid, attr::kSmInfo, kSmpDataOffset, kSmpDataBytes, sm_info::kAll},
    {"Notice", kSubnLid, attr::kNotice, kSmpDataOffset, kSmpDataBytes, notice::kAll},
    {"ClassPortInfo", kPerf, attr::kClassPortInfo, kGsDataOffset, kGsDataBytes,
     class_port_info::kAll},
    {"PortCounters", kPerf, attr::kPortCounters, kGsDataOffset, kGsDataBytes, port_counters::kAll},
    {"PortCountersExtended", kPerf, attr::kPortCountersExtended, kGsDataOffset, kGsDataBytes,
     port_counters_ext::kAll},
    {"PortXmitDataSL", kPerf, attr::kPortXmitDataSl, kGsDataOffset, kGsDataBytes, {}},
    {"PortRcvDataSL", kPerf, attr::kPortRcvDataSl, kGsDataOffset, kGsDataBytes, {}},
    {"ClassPortInfo", kCongestion, attr::kClassPortInfo, kGsDataOffset, kGsDataBytes,
     class_port_info::kAll},
    {"CongestionInfo", kCongestion, attr::kCongestionInfo, kGsDataOffset, kGsDataBytes,
     congestion_info::kAll},
    {"CongestionKeyInfo", kCongestion, attr::kCongestionKeyInfo, kGsDataOffset, kGsDataBytes,
     congestion_key_info::kAll},
    {"CongestionLog", kCongestion, attr::kCongestionLog, kCcLogDataOffset, kCcLogDataBytes, {}},
    {"SwitchCongestionSetting", kCongestion, attr::kSwitchCongestionSetting, kGsDataOffset,
     kGsDataBytes, switch_congestion_setting::kAll},
    {"SwitchPortCongestionSetting",
     kCongestion,
     attr::kSwitchPortCongestionSetting,
     kGsDataOffset,
     kGsDataBytes,
     {}},
    {"CACongestionSetting",
     kCongestion,
     attr::kCaCongestionSetting,
     kGsDataOffset,
     kGsDataBytes,
     {}},
    {"CongestionControlTable",
     kCongestion,
     attr::kCongestionControlTable,
     kGsDataOffset,
     kGsDataBytes,
     {}},
    {"Timestamp", kCongestion, attr::kTimestamp, kGsDataOffset, kGsDataBytes, {}},
};

}  // namespace

const AttributeLayout* FindAttribute(uint8_t cls, uint16_t id) {
  if (cls == mgmt_class::kSubnDirected) cls = mgmt_class::kSubnLid;
  for (const AttributeLayout& a : kTable)
    if (a.mgmt_class == cls && a.id == id) return &a;
  return nullptr;
}

std::string DescribeMad(const uint8_t* mad) {
  std::string out = Print(mad, hdr::kCommon);
  const AttributeLayout* a = FindAttribute(mad[1], static_cast<uint16_t>(mad[16] << 8 | mad[17]));
  if (!a) return out + "(attribute not described)\n";
  out += std::string("-- ") + a->name + "\n";
  const uint8_t* data = mad + a->data_offset;
  if (!a->fields.empty()) return out + Print(data, a->fields);
  char buf[8];
  for (int i = 0; i < a->data_bytes; ++i) {
    std::snprintf(buf, sizeof buf, "%02x%s", data[i], i % 16 == 15 ? "\n" : " ");
    out += buf;
  }
  return out;
}

}  // namespace ibemu::mad
