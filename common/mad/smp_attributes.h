// Subnet management attributes (IBA 14.2.5), offsets from the SMP data (MAD byte 64). Field names
// are libibmad's, so our dumps and smpquery's read alike; tests/unit/mad_codec_test.cc checks
// every field here against the installed libibmad.
#pragma once
#include "common/mad/field.h"

namespace ibemu::mad {

namespace node_info {
inline constexpr Field kBaseVersion{"BaseVers", 0, 0, 8};
inline constexpr Field kClassVersion{"ClassVers", 1, 0, 8};
inline constexpr Field kNodeType{"NodeType", 2, 0, 8};
inline constexpr Field kNumPorts{"NumPorts", 3, 0, 8};
inline constexpr Field kSystemGuid{"SystemGuid", 4, 0, 64, Format::kHex};
inline constexpr Field kNodeGuid{"Guid", 12, 0, 64, Format::kHex};
inline constexpr Field kPortGuid{"PortGuid", 20, 0, 64, Format::kHex};
inline constexpr Field kPartitionCap{"PartCap", 28, 0, 16};
inline constexpr Field kDeviceId{"DevId", 30, 0, 16, Format::kHex};
inline constexpr Field kRevision{"Revision", 32, 0, 32, Format::kHex};
inline constexpr Field kLocalPortNum{"LocalPort", 36, 0, 8};
inline constexpr Field kVendorId{"VendorId", 37, 0, 24, Format::kHex};
inline constexpr const Field* kAll[] = {
    &kBaseVersion, &kClassVersion, &kNodeType, &kNumPorts, &kSystemGuid,   &kNodeGuid,
    &kPortGuid,    &kPartitionCap, &kDeviceId, &kRevision, &kLocalPortNum, &kVendorId};
constexpr uint8_t kTypeCa = 1, kTypeSwitch = 2, kTypeRouter = 3;
}  // namespace node_info

namespace node_description {
inline constexpr Field kText{"NodeDesc", 0, 0, 512, Format::kText};
inline constexpr const Field* kAll[] = {&kText};
}  // namespace node_description

namespace port_info {
inline constexpr Field kMKey{"Mkey", 0, 0, 64, Format::kHex};
inline constexpr Field kGidPrefix{"GidPrefix", 8, 0, 64, Format::kHex};
inline constexpr Field kLid{"Lid", 16, 0, 16};
inline constexpr Field kMasterSmLid{"SMLid", 18, 0, 16};
inline constexpr Field kCapabilityMask{"CapMask", 20, 0, 32, Format::kHex};
inline constexpr Field kDiagCode{"DiagCode", 24, 0, 16, Format::kHex};
inline constexpr Field kMKeyLeasePeriod{"MkeyLeasePeriod", 26, 0, 16};
inline constexpr Field kLocalPortNum{"LocalPort", 28, 0, 8};
inline constexpr Field kLinkWidthEnabled{"LinkWidthEnabled", 29, 0, 8};
inline constexpr Field kLinkWidthSupported{"LinkWidthSupported", 30, 0, 8};
inline constexpr Field kLinkWidthActive{"LinkWidthActive", 31, 0, 8};
inline constexpr Field kLinkSpeedSupported{"LinkSpeedSupported", 32, 0, 4};
inline constexpr Field kPortState{"LinkState", 32, 4, 4};
inline constexpr Field kPortPhysicalState{"PhysLinkState", 33, 0, 4};
inline constexpr Field kLinkDownDefaultState{"LinkDownDefState", 33, 4, 4};
inline constexpr Field kMKeyProtectBits{"ProtectBits", 34, 0, 2};
inline constexpr Field kLmc{"LMC", 34, 5, 3};
inline constexpr Field kLinkSpeedActive{"LinkSpeedActive", 35, 0, 4};
inline constexpr Field kLinkSpeedEnabled{"LinkSpeedEnabled", 35, 4, 4};
inline constexpr Field kNeighborMtu{"NeighborMTU", 36, 0, 4};
inline constexpr Field kMasterSmSl{"SMSL", 36, 4, 4};
inline constexpr Field kVlCap{"VLCap", 37, 0, 4};
inline constexpr Field kInitType{"InitType", 37, 4, 4};
inline constexpr Field kVlHighLimit{"VLHighLimit", 38, 0, 8};
inline constexpr Field kVlArbHighCap{"VLArbHighCap", 39, 0, 8};
inline constexpr Field kVlArbLowCap{"VLArbLowCap", 40, 0, 8};
inline constexpr Field kInitTypeReply{"InitReply", 41, 0, 4};
inline constexpr Field kMtuCap{"MtuCap", 41, 4, 4};
inline constexpr Field kVlStallCount{"VLStallCount", 42, 0, 3};
inline constexpr Field kHoqLife{"HoqLife", 42, 3, 5};
inline constexpr Field kOperationalVls{"OperVLs", 43, 0, 4};
inline constexpr Field kPartitionEnforcementInbound{"PartEnforceInb", 43, 4, 1};
inline constexpr Field kPartitionEnforcementOutbound{"PartEnforceOutb", 43, 5, 1};
inline constexpr Field kFilterRawInbound{"FilterRawInb", 43, 6, 1};
inline constexpr Field kFilterRawOutbound{"FilterRawOutb", 43, 7, 1};
inline constexpr Field kMKeyViolations{"MkeyViolations", 44, 0, 16};
inline constexpr Field kPKeyViolations{"PkeyViolations", 46, 0, 16};
inline constexpr Field kQKeyViolations{"QkeyViolations", 48, 0, 16};
inline constexpr Field kGuidCap{"GuidCap", 50, 0, 8};
inline constexpr Field kClientReregister{"ClientReregister", 51, 0, 1};
inline constexpr Field kMulticastPKeyTrapSuppression{"McastPkeyTrapSuppressionEnabled", 51, 1, 2};
inline constexpr Field kSubnetTimeout{"SubnetTimeout", 51, 3, 5};
inline constexpr Field kRespTimeValue{"RespTimeVal", 52, 3, 5};
inline constexpr Field kLocalPhyErrors{"LocalPhysErr", 53, 0, 4};
inline constexpr Field kOverrunErrors{"OverrunErr", 53, 4, 4};
inline constexpr Field kMaxCreditHint{"MaxCreditHint", 54, 0, 16};
inline constexpr Field kLinkRoundTripLatency{"RoundTrip", 57, 0, 24};
inline constexpr Field kCapabilityMask2{"CapabilityMask2", 60, 0, 16, Format::kHex};
inline constexpr Field kLinkSpeedExtActive{"LinkSpeedExtActive", 62, 0, 4};
inline constexpr Field kLinkSpeedExtSupported{"LinkSpeedExtSupported", 62, 4, 4};
inline constexpr Field kLinkSpeedExtEnabled{"LinkSpeedExtEnabled", 63, 3, 5};
inline constexpr const Field* kAll[] = {&kMKey,
                                        &kGidPrefix,
                                        &kLid,
                                        &kMasterSmLid,
                                        &kCapabilityMask,
                                        &kDiagCode,
                                        &kMKeyLeasePeriod,
                                        &kLocalPortNum,
                                        &kLinkWidthEnabled,
                                        &kLinkWidthSupported,
                                        &kLinkWidthActive,
                                        &kLinkSpeedSupported,
                                        &kPortState,
                                        &kPortPhysicalState,
                                        &kLinkDownDefaultState,
                                        &kMKeyProtectBits,
                                        &kLmc,
                                        &kLinkSpeedActive,
                                        &kLinkSpeedEnabled,
                                        &kNeighborMtu,
                                        &kMasterSmSl,
                                        &kVlCap,
                                        &kInitType,
                                        &kVlHighLimit,
                                        &kVlArbHighCap,
                                        &kVlArbLowCap,
                                        &kInitTypeReply,
                                        &kMtuCap,
                                        &kVlStallCount,
                                        &kHoqLife,
                                        &kOperationalVls,
                                        &kPartitionEnforcementInbound,
                                        &kPartitionEnforcementOutbound,
                                        &kFilterRawInbound,
                                        &kFilterRawOutbound,
                                        &kMKeyViolations,
                                        &kPKeyViolations,
                                        &kQKeyViolations,
                                        &kGuidCap,
                                        &kClientReregister,
                                        &kMulticastPKeyTrapSuppression,
                                        &kSubnetTimeout,
                                        &kRespTimeValue,
                                        &kLocalPhyErrors,
                                        &kOverrunErrors,
                                        &kMaxCreditHint,
                                        &kLinkRoundTripLatency,
                                        &kCapabilityMask2,
                                        &kLinkSpeedExtActive,
                                        &kLinkSpeedExtSupported,
                                        &kLinkSpeedExtEnabled};
// PortState and PortPhysicalState values (IBA 14.2.5.6).
constexpr uint8_t kStateNoChange = 0, kStateDown = 1, kStateInit = 2, kStateArmed = 3,
                  kStateActive = 4;
constexpr uint8_t kPhysNoChange = 0, kPhysSleep = 1, kPhysPolling = 2, kPhysDisabled = 3,
                  kPhysLinkUp = 5;
// CapabilityMask bits (IBA 14.2.5.6, as smpquery decodes them).
constexpr uint32_t kCapIsSm = 1u << 1;
constexpr uint32_t kCapIsNoticeSupported = 1u << 2;
constexpr uint32_t kCapIsTrapSupported = 1u << 3;
constexpr uint32_t kCapIsSlMappingSupported = 1u << 6;
constexpr uint32_t kCapIsSmDisabled = 1u << 10;
constexpr uint32_t kCapIsSystemImageGuidSupported = 1u << 11;
constexpr uint32_t kCapIsExtendedSpeedsSupported = 1u << 14;
constexpr uint32_t kCapIsCommunicationManagementSupported = 1u << 16;
constexpr uint32_t kCapIsVendorClassSupported = 1u << 20;
constexpr uint32_t kCapIsClientReregistrationSupported = 1u << 25;
}  // namespace port_info

namespace switch_info {
inline constexpr Field kLinearFdbCap{"LinearFdbCap", 0, 0, 16};
inline constexpr Field kRandomFdbCap{"RandomFdbCap", 2, 0, 16};
inline constexpr Field kMulticastFdbCap{"McastFdbCap", 4, 0, 16};
inline constexpr Field kLinearFdbTop{"LinearFdbTop", 6, 0, 16};
inline constexpr Field kDefaultPort{"DefPort", 8, 0, 8};
inline constexpr Field kDefaultMulticastPrimaryPort{"DefMcastPrimPort", 9, 0, 8};
inline constexpr Field kDefaultMulticastNotPrimaryPort{"DefMcastNotPrimPort", 10, 0, 8};
inline constexpr Field kLifeTimeValue{"LifeTime", 11, 0, 5};
inline constexpr Field kPortStateChange{"StateChange", 11, 5, 1};
inline constexpr Field kOptimizedSl2VlMapping{"OptSLtoVLMapping", 11, 6, 2};
inline constexpr Field kLidsPerPort{"LidsPerPort", 12, 0, 16};
inline constexpr Field kPartitionEnforcementCap{"PartEnforceCap", 14, 0, 16};
inline constexpr Field kInboundEnforcementCap{"InboundPartEnf", 16, 0, 1};
inline constexpr Field kOutboundEnforcementCap{"OutboundPartEnf", 16, 1, 1};
inline constexpr Field kFilterRawInboundCap{"FilterRawInbound", 16, 2, 1};
inline constexpr Field kFilterRawOutboundCap{"FilterRawOutbound", 16, 3, 1};
inline constexpr Field kEnhancedPort0{"EnhancedPort0", 16, 4, 1};
inline constexpr Field kMulticastFdbTop{"MulticastFDBTop", 18, 0, 16, Format::kHex};
inline constexpr const Field* kAll[] = {&kLinearFdbCap,
                                        &kRandomFdbCap,
                                        &kMulticastFdbCap,
                                        &kLinearFdbTop,
                                        &kDefaultPort,
                                        &kDefaultMulticastPrimaryPort,
                                        &kDefaultMulticastNotPrimaryPort,
                                        &kLifeTimeValue,
                                        &kPortStateChange,
                                        &kOptimizedSl2VlMapping,
                                        &kLidsPerPort,
                                        &kPartitionEnforcementCap,
                                        &kInboundEnforcementCap,
                                        &kOutboundEnforcementCap,
                                        &kFilterRawInboundCap,
                                        &kFilterRawOutboundCap,
                                        &kEnhancedPort0,
                                        &kMulticastFdbTop};
}  // namespace switch_info

// Tables: whole-attribute byte runs with a documented element layout.
namespace guid_info {
inline constexpr Field kGuid0{"GUID0", 0, 0, 64, Format::kHex};
inline constexpr int kGuidsPerBlock = 8;
}  // namespace guid_info
namespace pkey_table {
inline constexpr Field kBlock{"PkeyTable", 0, 0, 512, Format::kBytes};
inline constexpr int kPKeysPerBlock = 32;
}  // namespace pkey_table
namespace sl2vl_table {
// One nibble per SL: SL 2k is the high nibble of byte k.
inline constexpr Field kTable{"SLToVLMap", 0, 0, 64, Format::kHex};
inline constexpr Field VlOfSl(int sl) {
  return Field{"VL", static_cast<uint16_t>(sl / 2), static_cast<uint8_t>(sl % 2 * 4), 4};
}
}  // namespace sl2vl_table
namespace vlarb_table {
// 32 entries of (reserved 4, VL 4, Weight 8) per block.
inline constexpr Field kTable{"VLArbTbl", 0, 0, 512, Format::kBytes};
inline constexpr int kEntriesPerBlock = 32;
inline constexpr Field Vl(int i) {
  return Field{"VL", static_cast<uint16_t>(2 * i), 4, 4};
}
inline constexpr Field Weight(int i) {
  return Field{"Weight", static_cast<uint16_t>(2 * i + 1), 0, 8};
}
// AttributeModifier bits 31:16.
constexpr int kLowFirst = 1, kLowSecond = 2, kHighFirst = 3, kHighSecond = 4;
}  // namespace vlarb_table
namespace lft {
inline constexpr Field kBlock{"LinearForwTbl", 0, 0, 512, Format::kBytes};
inline constexpr int kLidsPerBlock = 64;
}  // namespace lft
namespace mft {
inline constexpr Field kBlock{"MulticastForwTbl", 0, 0, 512, Format::kBytes};
inline constexpr int kMlidsPerBlock = 32;
}  // namespace mft

namespace sm_info {
inline constexpr Field kGuid{"SmInfoGuid", 0, 0, 64, Format::kHex};
inline constexpr Field kSmKey{"SmInfoKey", 8, 0, 64, Format::kHex};
inline constexpr Field kActCount{"SmActivity", 16, 0, 32};
inline constexpr Field kPriority{"SmPriority", 20, 0, 4};
inline constexpr Field kSmState{"SmState", 20, 4, 4};
inline constexpr const Field* kAll[] = {&kGuid, &kSmKey, &kActCount, &kPriority, &kSmState};
constexpr uint8_t kStateNotActive = 0, kStateDiscovering = 1, kStateStandby = 2, kStateMaster = 3;
}  // namespace sm_info

// Notice (IBA 13.4.8.2), as sent by an SMA in a Trap.
namespace notice {
inline constexpr Field kIsGeneric{"NoticeIsGeneric", 0, 0, 1};
inline constexpr Field kType{"NoticeType", 0, 1, 7};
inline constexpr Field kProducerType{"NoticeProducerType", 1, 0, 24};
inline constexpr Field kTrapNumber{"NoticeTrapNumber", 4, 0, 16};
inline constexpr Field kIssuerLid{"NoticeIssuerLID", 6, 0, 16};
inline constexpr Field kToggle{"NoticeToggle", 8, 0, 1};
inline constexpr Field kCount{"NoticeCount", 8, 1, 15};
inline constexpr Field kDataDetails{"NoticeDataDetails", 10, 0, 432, Format::kBytes};
inline constexpr Field kDataLid{"NoticeDataLID", 10, 0, 16};  // trap 128: the switch's LID
inline constexpr Field kData144Lid{"NoticeDataTrap144LID", 12, 0, 16};
inline constexpr Field kData144CapMask{"NoticeDataTrap144CapMask", 16, 0, 32, Format::kHex};
inline constexpr const Field* kAll[] = {&kIsGeneric, &kType,   &kProducerType, &kTrapNumber,
                                        &kIssuerLid, &kToggle, &kCount,        &kDataDetails};
constexpr uint8_t kTypeUrgent = 1;    // trap 128/144 are "urgent" (type 1)
constexpr uint8_t kTypeSecurity = 2;  // key violations
constexpr uint16_t kTrapLinkStateChange = 128;
constexpr uint16_t kTrapCapabilityMaskChange = 144;
}  // namespace notice

}  // namespace ibemu::mad
