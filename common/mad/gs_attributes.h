// General-services attributes: ClassPortInfo (IBA 13.4.8.1, every GS class), the Performance
// Management counters (16.1.3-4, with the per-SL data counters of 16.1.4.x), and the Congestion
// Control attributes (annex A10.4.3). Offsets from the class's data (MAD byte 64), except the
// CongestionLog, which starts at MAD byte 32. Names are libibmad's.
#pragma once
#include "common/mad/field.h"

namespace ibemu::mad {

namespace class_port_info {
inline constexpr Field kBaseVersion{"BaseVersion", 0, 0, 8};
inline constexpr Field kClassVersion{"ClassVersion", 1, 0, 8};
inline constexpr Field kCapabilityMask{"CapabilityMask", 2, 0, 16, Format::kHex};
inline constexpr Field kCapabilityMask2{"CapabilityMask2", 4, 0, 27, Format::kHex};
inline constexpr Field kRespTimeValue{"RespTimeVal", 7, 3, 5};
inline constexpr Field kRedirectGid{"RedirectGID", 8, 0, 128, Format::kBytes};
inline constexpr Field kRedirectTc{"RedirectTC", 24, 0, 8};
inline constexpr Field kRedirectSl{"RedirectSL", 25, 0, 4};
inline constexpr Field kRedirectFl{"RedirectFL", 25, 4, 20};
inline constexpr Field kRedirectLid{"RedirectLID", 28, 0, 16};
inline constexpr Field kRedirectPKey{"RedirectPKey", 30, 0, 16, Format::kHex};
inline constexpr Field kRedirectQp{"RedirectQP", 33, 0, 24};
inline constexpr Field kRedirectQKey{"RedirectQKey", 36, 0, 32, Format::kHex};
inline constexpr Field kTrapGid{"TrapGID", 40, 0, 128, Format::kBytes};
inline constexpr Field kTrapTc{"TrapTC", 56, 0, 8};
inline constexpr Field kTrapSl{"TrapSL", 57, 0, 4};
inline constexpr Field kTrapFl{"TrapFL", 57, 4, 20};
inline constexpr Field kTrapLid{"TrapLID", 60, 0, 16};
inline constexpr Field kTrapPKey{"TrapPKey", 62, 0, 16, Format::kHex};
inline constexpr Field kTrapHl{"TrapHL", 64, 0, 8};
inline constexpr Field kTrapQp{"TrapQP", 65, 0, 24};
inline constexpr Field kTrapQKey{"TrapQKey", 68, 0, 32, Format::kHex};
inline constexpr const Field* kAll[] = {
    &kBaseVersion,  &kClassVersion, &kCapabilityMask, &kCapabilityMask2, &kRespTimeValue,
    &kRedirectGid,  &kRedirectTc,   &kRedirectSl,     &kRedirectFl,      &kRedirectLid,
    &kRedirectPKey, &kRedirectQp,   &kRedirectQKey,   &kTrapGid,         &kTrapTc,
    &kTrapSl,       &kTrapFl,       &kTrapLid,        &kTrapPKey,        &kTrapHl,
    &kTrapQp,       &kTrapQKey};
// PerfMgt CapabilityMask bits.
constexpr uint16_t kPmAllPortSelect = 1u << 8;
constexpr uint16_t kPmExtendedWidth = 1u << 9;
constexpr uint16_t kPmXmitWait = 1u << 12;
}  // namespace class_port_info

namespace port_counters {
inline constexpr Field kPortSelect{"PortSelect", 1, 0, 8};
inline constexpr Field kCounterSelect{"CounterSelect", 2, 0, 16, Format::kHex};
inline constexpr Field kSymbolErrorCounter{"SymbolErrorCounter", 4, 0, 16};
inline constexpr Field kLinkErrorRecoveryCounter{"LinkErrorRecoveryCounter", 6, 0, 8};
inline constexpr Field kLinkDownedCounter{"LinkDownedCounter", 7, 0, 8};
inline constexpr Field kPortRcvErrors{"PortRcvErrors", 8, 0, 16};
inline constexpr Field kPortRcvRemotePhysicalErrors{"PortRcvRemotePhysicalErrors", 10, 0, 16};
inline constexpr Field kPortRcvSwitchRelayErrors{"PortRcvSwitchRelayErrors", 12, 0, 16};
inline constexpr Field kPortXmitDiscards{"PortXmitDiscards", 14, 0, 16};
inline constexpr Field kPortXmitConstraintErrors{"PortXmitConstraintErrors", 16, 0, 8};
inline constexpr Field kPortRcvConstraintErrors{"PortRcvConstraintErrors", 17, 0, 8};
inline constexpr Field kCounterSelect2{"CounterSelect2", 18, 0, 8, Format::kHex};
inline constexpr Field kLocalLinkIntegrityErrors{"LocalLinkIntegrityErrors", 19, 0, 4};
inline constexpr Field kExcessiveBufferOverrunErrors{"ExcessiveBufferOverrunErrors", 19, 4, 4};
inline constexpr Field kVl15Dropped{"VL15Dropped", 22, 0, 16};
inline constexpr Field kPortXmitData{"PortXmitData", 24, 0, 32};
inline constexpr Field kPortRcvData{"PortRcvData", 28, 0, 32};
inline constexpr Field kPortXmitPkts{"PortXmitPkts", 32, 0, 32};
inline constexpr Field kPortRcvPkts{"PortRcvPkts", 36, 0, 32};
inline constexpr Field kPortXmitWait{"PortXmitWait", 40, 0, 32};
inline constexpr const Field* kAll[] = {&kPortSelect,
                                        &kCounterSelect,
                                        &kSymbolErrorCounter,
                                        &kLinkErrorRecoveryCounter,
                                        &kLinkDownedCounter,
                                        &kPortRcvErrors,
                                        &kPortRcvRemotePhysicalErrors,
                                        &kPortRcvSwitchRelayErrors,
                                        &kPortXmitDiscards,
                                        &kPortXmitConstraintErrors,
                                        &kPortRcvConstraintErrors,
                                        &kCounterSelect2,
                                        &kLocalLinkIntegrityErrors,
                                        &kExcessiveBufferOverrunErrors,
                                        &kVl15Dropped,
                                        &kPortXmitData,
                                        &kPortRcvData,
                                        &kPortXmitPkts,
                                        &kPortRcvPkts,
                                        &kPortXmitWait};
}  // namespace port_counters

namespace port_counters_ext {
inline constexpr Field kPortSelect{"PortSelect", 1, 0, 8};
inline constexpr Field kCounterSelect{"CounterSelect", 2, 0, 16, Format::kHex};
inline constexpr Field kCounterSelect2{"CounterSelect2", 4, 0, 32, Format::kHex};
inline constexpr Field kPortXmitData{"PortXmitData", 8, 0, 64};
inline constexpr Field kPortRcvData{"PortRcvData", 16, 0, 64};
inline constexpr Field kPortXmitPkts{"PortXmitPkts", 24, 0, 64};
inline constexpr Field kPortRcvPkts{"PortRcvPkts", 32, 0, 64};
inline constexpr Field kPortUnicastXmitPkts{"PortUnicastXmitPkts", 40, 0, 64};
inline constexpr Field kPortUnicastRcvPkts{"PortUnicastRcvPkts", 48, 0, 64};
inline constexpr Field kPortMulticastXmitPkts{"PortMulticastXmitPkts", 56, 0, 64};
inline constexpr Field kPortMulticastRcvPkts{"PortMulticastRcvPkts", 64, 0, 64};
inline constexpr Field kSymbolErrorCounter{"SymbolErrorCounter", 72, 0, 64};
inline constexpr Field kLinkErrorRecoveryCounter{"LinkErrorRecoveryCounter", 80, 0, 64};
inline constexpr Field kLinkDownedCounter{"LinkDownedCounter", 88, 0, 64};
inline constexpr Field kPortRcvErrors{"PortRcvErrors", 96, 0, 64};
inline constexpr Field kPortRcvRemotePhysicalErrors{"PortRcvRemotePhysicalErrors", 104, 0, 64};
inline constexpr Field kPortRcvSwitchRelayErrors{"PortRcvSwitchRelayErrors", 112, 0, 64};
inline constexpr Field kPortXmitDiscards{"PortXmitDiscards", 120, 0, 64};
inline constexpr Field kPortXmitConstraintErrors{"PortXmitConstraintErrors", 128, 0, 64};
inline constexpr Field kPortRcvConstraintErrors{"PortRcvConstraintErrors", 136, 0, 64};
inline constexpr Field kLocalLinkIntegrityErrors{"LocalLinkIntegrityErrors", 144, 0, 64};
inline constexpr Field kExcessiveBufferOverrunErrors{"ExcessiveBufferOverrunErrors", 152, 0, 64};
inline constexpr Field kVl15Dropped{"VL15Dropped", 160, 0, 64};
inline constexpr Field kPortXmitWait{"PortXmitWait", 168, 0, 64};
inline constexpr Field kQp1Dropped{"QP1Dropped", 176, 0, 64};
inline constexpr const Field* kAll[] = {&kPortSelect,
                                        &kCounterSelect,
                                        &kCounterSelect2,
                                        &kPortXmitData,
                                        &kPortRcvData,
                                        &kPortXmitPkts,
                                        &kPortRcvPkts,
                                        &kPortUnicastXmitPkts,
                                        &kPortUnicastRcvPkts,
                                        &kPortMulticastXmitPkts,
                                        &kPortMulticastRcvPkts,
                                        &kSymbolErrorCounter,
                                        &kLinkErrorRecoveryCounter,
                                        &kLinkDownedCounter,
                                        &kPortRcvErrors,
                                        &kPortRcvRemotePhysicalErrors,
                                        &kPortRcvSwitchRelayErrors,
                                        &kPortXmitDiscards,
                                        &kPortXmitConstraintErrors,
                                        &kPortRcvConstraintErrors,
                                        &kLocalLinkIntegrityErrors,
                                        &kExcessiveBufferOverrunErrors,
                                        &kVl15Dropped,
                                        &kPortXmitWait,
                                        &kQp1Dropped};
}  // namespace port_counters_ext

// PortXmitDataSL / PortRcvDataSL: PortSelect at byte 1, then 16 counters of 32 bits from byte 4.
namespace port_data_sl {
inline constexpr Field kPortSelect{"PortSelect", 1, 0, 8};
inline constexpr Field Sl(int sl) {
  return Field{"DataSL", static_cast<uint16_t>(4 + 4 * sl), 0, 32};
}
}  // namespace port_data_sl

namespace congestion_info {
inline constexpr Field kCongestionInfo{"CongestionInfo", 0, 0, 16, Format::kHex};
inline constexpr Field kControlTableCap{"ControlTableCap", 2, 0, 8};
inline constexpr const Field* kAll[] = {&kCongestionInfo, &kControlTableCap};
}  // namespace congestion_info

namespace congestion_key_info {
inline constexpr Field kCcKey{"CC_Key", 0, 0, 64, Format::kHex};
inline constexpr Field kCcKeyProtectBit{"CC_KeyProtectBit", 8, 0, 1};
inline constexpr Field kCcKeyLeasePeriod{"CC_KeyLeasePeriod", 10, 0, 16};
inline constexpr Field kCcKeyViolations{"CC_KeyViolations", 12, 0, 16};
inline constexpr const Field* kAll[] = {&kCcKey, &kCcKeyProtectBit, &kCcKeyLeasePeriod,
                                        &kCcKeyViolations};
}  // namespace congestion_key_info

// Offsets from MAD byte 32.
namespace congestion_log {
inline constexpr Field kLogType{"LogType", 0, 0, 8};
inline constexpr Field kCongestionFlags{"CongestionFlags", 1, 0, 8, Format::kHex};
// Switch variant
inline constexpr Field kLogEventsCounter{"LogEventsCounter", 2, 0, 16};
inline constexpr Field kSwitchCurrentTimeStamp{"CurrentTimeStamp", 4, 0, 32};
inline constexpr Field kPortMap{"PortMap", 8, 0, 256, Format::kBytes};
constexpr int kSwitchEntriesOffset = 40, kSwitchEntryBytes = 12, kSwitchEntries = 15;
// Relative to one switch entry.
inline constexpr Field kEntrySlid{"SLID", 0, 0, 16};
inline constexpr Field kEntryDlid{"DLID", 2, 0, 16};
inline constexpr Field kEntrySl{"SL", 4, 0, 4};
inline constexpr Field kEntryTimestamp{"Timestamp", 8, 0, 32};
// CA variant
inline constexpr Field kThresholdEventCounter{"ThresholdEventCounter", 2, 0, 16};
inline constexpr Field kThresholdCongestionEventMap{"ThresholdCongestionEventMap", 4, 0, 16,
                                                    Format::kHex};
inline constexpr Field kCaCurrentTimeStamp{"CurrentTimeStamp", 8, 0, 32};
constexpr int kCaEntriesOffset = 12, kCaEntryBytes = 16, kCaEntries = 13;
// Relative to one CA entry.
inline constexpr Field kCaEntryLocalQp{"Local_QP_CN_Entry", 0, 0, 24};
inline constexpr Field kCaEntrySl{"SL_CN_Entry", 3, 0, 4};
inline constexpr Field kCaEntryServiceType{"Service_Type_CN_Entry", 3, 4, 4};
inline constexpr Field kCaEntryRemoteQp{"Remote_QP_Number_CN_Entry", 4, 0, 24};
inline constexpr Field kCaEntryLocalLid{"Local_LID_CN", 8, 0, 16};
inline constexpr Field kCaEntryRemoteLid{"Remote_LID_CN_Entry", 10, 0, 16};
inline constexpr Field kCaEntryTimestamp{"Timestamp_CN_Entry", 12, 0, 32};
constexpr uint8_t kLogTypeSwitch = 1, kLogTypeCa = 2;
}  // namespace congestion_log

namespace switch_congestion_setting {
inline constexpr Field kControlMap{"Control_Map", 0, 0, 32, Format::kHex};
inline constexpr Field kVictimMask{"Victim_Mask", 4, 0, 256, Format::kBytes};
inline constexpr Field kCreditMask{"Credit_Mask", 36, 0, 256, Format::kBytes};
inline constexpr Field kThreshold{"Threshold", 68, 0, 4};
inline constexpr Field kPacketSize{"Packet_Size", 69, 0, 8};
inline constexpr Field kCsThreshold{"CS_Threshold", 70, 0, 4};
inline constexpr Field kCsReturnDelay{"CS_ReturnDelay", 72, 0, 16, Format::kHex};
inline constexpr Field kMarkingRate{"Marking_Rate", 74, 0, 16};
inline constexpr const Field* kAll[] = {&kControlMap,    &kVictimMask, &kCreditMask,
                                        &kThreshold,     &kPacketSize, &kCsThreshold,
                                        &kCsReturnDelay, &kMarkingRate};
}  // namespace switch_congestion_setting

// One 4-byte element per port; 32 per block (OpenSM) — see docs/management.md for the 48 of
// ibccquery.
namespace switch_port_congestion_setting {
inline constexpr Field kValid{"Valid", 0, 0, 1};
inline constexpr Field kControlType{"Control_Type", 0, 1, 1};
inline constexpr Field kThreshold{"Threshold", 0, 4, 4};
inline constexpr Field kPacketSize{"Packet_Size", 1, 0, 8};
inline constexpr Field kCongParmMarkingRate{"Cong_Parm_Marking_Rate", 2, 0, 16};
inline constexpr const Field* kAll[] = {&kValid, &kControlType, &kThreshold, &kPacketSize,
                                        &kCongParmMarkingRate};
constexpr int kElementBytes = 4, kElementsPerBlock = 32;
}  // namespace switch_port_congestion_setting

namespace ca_congestion_setting {
inline constexpr Field kPortControl{"Port_Control", 0, 0, 16, Format::kHex};
inline constexpr Field kControlMap{"Control_Map", 2, 0, 16, Format::kHex};
constexpr int kEntriesOffset = 4, kEntryBytes = 8;
// Relative to one per-SL entry.
inline constexpr Field kCctiTimer{"CCTI_Timer", 0, 0, 16};
inline constexpr Field kCctiIncrease{"CCTI_Increase", 2, 0, 8};
inline constexpr Field kTriggerThreshold{"Trigger_Threshold", 3, 0, 8};
inline constexpr Field kCctiMin{"CCTI_Min", 4, 0, 8};
inline constexpr const Field* kEntry[] = {&kCctiTimer, &kCctiIncrease, &kTriggerThreshold,
                                          &kCctiMin};
}  // namespace ca_congestion_setting

namespace congestion_control_table {
inline constexpr Field kCctiLimit{"CCTI_Limit", 0, 0, 16};
constexpr int kEntriesOffset = 4, kEntriesPerBlock = 64;
// Relative to one 2-byte entry.
inline constexpr Field kCctShift{"CCT_Shift", 0, 0, 2};
inline constexpr Field kCctMultiplier{"CCT_Multiplier", 0, 2, 14};
}  // namespace congestion_control_table

// The Notice of the Congestion Control class's one trap, Bad CC_Key (in the MgtData, MAD byte
// 64): the Notice header of smp_attributes.h's `notice`, then these DataDetails (IBA A10, as the
// 2008 draft tabulates them: the offending MAD's requester, method, attribute and key).
namespace cc_notice {
inline constexpr Field kSlid{"SLID", 10, 0, 16};
inline constexpr Field kMethod{"Method", 12, 0, 8, Format::kHex};
inline constexpr Field kAttrId{"AttributeID", 14, 0, 16, Format::kHex};
inline constexpr Field kAttrMod{"AttributeModifier", 18, 0, 32, Format::kHex};
inline constexpr Field kQp{"QP", 23, 0, 24};
inline constexpr Field kCcKey{"CC_Key", 26, 0, 64, Format::kHex};
inline constexpr Field kSgid{"SGID", 34, 0, 128, Format::kBytes};
constexpr uint16_t kTrapBadCcKey = 0;
}  // namespace cc_notice

namespace timestamp {
inline constexpr Field kTimestamp{"Timestamp", 0, 0, 32};
}  // namespace timestamp

}  // namespace ibemu::mad
