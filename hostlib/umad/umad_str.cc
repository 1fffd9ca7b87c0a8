// umad_str.h: names of management classes, methods, attributes and status codes, as printed by
// the real library (its spellings kept, "CongestionManagment" and the unclosed "<unknown"
// included, so tool output does not change). Each table is a list of (value, name).
#include <endian.h>
#include <infiniband/umad.h>
#include <infiniband/umad_str.h>

#include <cstdint>
#include <span>

#define UMAD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Name {
  uint16_t value;
  const char* name;
};

const char* Lookup(std::span<const Name> table, uint16_t value, const char* otherwise) {
  for (const Name& n : table)
    if (n.value == value) return n.name;
  return otherwise;
}

// IBA 13.4.4 management classes.
constexpr Name kClasses[] = {
    {0x01, "Subn"},   {0x81, "Subn"},    {0x03, "SubnAdm"}, {0x04, "Perf"},
    {0x05, "BM"},     {0x06, "DevMgt"},  {0x07, "ComMgt"},  {0x08, "SNMP"},
    {0x10, "DevAdm"}, {0x11, "BootMgt"}, {0x12, "BIS"},     {0x21, "CongestionManagment"},
};

// IBA 13.4.5 methods, and the SA's (15.2.2).
constexpr Name kMethods[] = {
    {0x01, "Get"},  {0x02, "Set"},    {0x81, "GetResp"},    {0x03, "Send"},
    {0x05, "Trap"}, {0x06, "Report"}, {0x86, "ReportResp"}, {0x07, "TrapRepress"},
};
constexpr Name kSaMethods[] = {
    {0x12, "GetTable"}, {0x92, "GetTableResp"}, {0x15, "Delete"},        {0x95, "DeleteResp"},
    {0x14, "GetMulti"}, {0x94, "GetMultiResp"}, {0x13, "GetTraceTable"},
};

// IBA 13.4.8 attributes every class shares.
constexpr Name kCommonAttrs[] = {
    {0x0001, "Class Port Info"}, {0x0002, "Notice"}, {0x0003, "Inform Info"}};

// IBA 14.2.5 SMP attributes.
constexpr Name kSmAttrs[] = {
    {0x0010, "NodeDescription"},
    {0x0011, "NodeInfo"},
    {0x0012, "SwitchInfo"},
    {0x0014, "GUIDInfo"},
    {0x0015, "PortInfo"},
    {0x0016, "P_KeyTable"},
    {0x0017, "SLtoVLMappingTable"},
    {0x0018, "VLArbitrationTable"},
    {0x0019, "LinearForwardingTable"},
    {0x001A, "RandomForwardingTable"},
    {0x001B, "MulticastForwardingTable"},
    {0x001C, "LinkSpeedWidthPairsTable"},
    {0x001D, "VendorSpecificMadsTable"},
    {0x001E, "HierarchyInfo"},
    {0x0020, "SMInfo"},
    {0x0030, "VendorDiag"},
    {0x0031, "LedInfo"},
    {0x0032, "CableInfo"},
    {0x0033, "PortInfoExtended"},
};

// IBA 15.2.5 SA attributes.
constexpr Name kSaAttrs[] = {
    {0x0011, "NodeRecord"},
    {0x0012, "PortInfoRecord"},
    {0x0013, "SLtoVLMappingTableRecord"},
    {0x0014, "SwitchInfoRecord"},
    {0x0015, "LinearForwardingTableRecord"},
    {0x0016, "RandomForwardingTableRecord"},
    {0x0017, "MulticastForwardingTableRecord"},
    {0x0018, "SMInfoRecord"},
    {0x0019, "LinkSpeedWidthPairsTableRecord"},
    {0x00F3, "InformInfoRecord"},
    {0x0020, "LinkRecord"},
    {0x0030, "GuidInfoRecord"},
    {0x0031, "ServiceRecord"},
    {0x0033, "P_KeyTableRecord"},
    {0x0035, "PathRecord"},
    {0x0036, "VLArbitrationTableRecord"},
    {0x0038, "MCMemberRecord"},
    {0x0039, "TraceRecord"},
    {0x003A, "MultiPathRecord"},
    {0x003B, "ServiceAssociationRecord"},
    {0x003C, "HierarchyInfoRecord"},
    {0x003D, "CableInfoRecord"},
    {0x003E, "PortInfoExtendedRecord"},
};

// IBA 12.6 CM attributes.
constexpr Name kCmAttrs[] = {
    {0x0010, "ConnectRequest"},
    {0x0011, "MsgRcptAck"},
    {0x0012, "ConnectReject"},
    {0x0013, "ConnectReply"},
    {0x0014, "ReadyToUse"},
    {0x0015, "DisconnectRequest"},
    {0x0016, "DisconnectReply"},
    {0x0017, "ServiceIDResReq"},
    {0x0018, "ServiceIDResReqResp"},
    {0x0019, "LoadAlternatePath"},
    {0x001A, "AlternatePathResponse"},
    {0x001B, "SuggestAlternatePath"},
    {0x001C, "SuggestPathResponse"},
};

// IBA 13.4.7 common status: bits 4:2 hold the code.
constexpr Name kStatusCodes[] = {
    {0x04, "Bad Version"},
    {0x08, "Method not supported"},
    {0x0C, "Method/Attribute combo not supported"},
    {0x1C, "Invalid attribute/modifier field"},
};

// IBA 15.2.1.1 SA status: the class-specific byte.
constexpr Name kSaStatus[] = {
    {0, "Success"},
    {1, "No Resources"},
    {2, "Request Invalid"},
    {3, "No Records"},
    {4, "Too Many Records"},
    {5, "Invalid GID"},
    {6, "Insufficient Components"},
    {7, "Request Denied"},
    {8, "Priority Suggested"},
};

}  // namespace

UMAD_EXPORT const char* umad_class_str(uint8_t mgmt_class) {
  if (const char* n = Lookup(kClasses, mgmt_class, nullptr)) return n;
  if ((mgmt_class >= 0x09 && mgmt_class <= 0x0F) || (mgmt_class >= 0x30 && mgmt_class <= 0x4F))
    return "Vendor";
  if (mgmt_class >= 0x10 && mgmt_class <= 0x2F) return "Application";
  return "<unknown>";
}

UMAD_EXPORT const char* umad_method_str(uint8_t mgmt_class, uint8_t method) {
  if (mgmt_class == 0x03)
    if (const char* n = Lookup(kSaMethods, method, nullptr)) return n;
  return Lookup(kMethods, method, "<unknown");
}

UMAD_EXPORT const char* umad_common_mad_status_str(__be16 be_status) {
  const uint16_t status = be16toh(be_status);
  if (status & 0x0001) return "Busy";
  if (status & 0x0002) return "Redirection required";
  return Lookup(kStatusCodes, status & 0x001C, "Success");
}

UMAD_EXPORT const char* umad_sa_mad_status_str(__be16 be_status) {
  return Lookup(kSaStatus, (be16toh(be_status) & 0xFF00) >> 8, "Undefined Error");
}

UMAD_EXPORT const char* umad_attribute_str(uint8_t mgmt_class, __be16 be_attr) {
  const uint16_t attr = be16toh(be_attr);
  const char* common = Lookup(kCommonAttrs, attr, "<unknown>");
  switch (mgmt_class) {
    case 0x01:
    case 0x81:
      return Lookup(kSmAttrs, attr, common);
    case 0x03:
      return Lookup(kSaAttrs, attr, common);
    case 0x07:
      return Lookup(kCmAttrs, attr, common);
    default:
      return common;
  }
}
