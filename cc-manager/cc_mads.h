// The Congestion Control class MADs the manager sends (class 0x21, class version 2, LID-routed
// to QP1 with the CC_Key at bytes 24-31), and the CongestionLog as read back.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "common/mad/gs_attributes.h"
#include "common/mad/mad_header.h"

namespace ibemu::ccmgr {

constexpr int kPortsPerBlock = mad::switch_port_congestion_setting::kElementsPerBlock;
constexpr int kCctPerBlock = mad::congestion_control_table::kEntriesPerBlock;

mad::MadBuffer BuildCcMad(uint8_t method, uint16_t attr, uint32_t attr_mod, uint64_t cc_key);
// The attribute's name as the annex spells it, for messages.
const char* CcAttributeName(uint16_t attr);
// What went wrong with the answer to `request` ("" if nothing): no answer, or a status.
std::string CcReplyProblem(const mad::MadBuffer& request, bool answered, uint16_t status);
// A 256-bit port mask as OpenSM writes it (0x, no leading zeros).
std::string PortMaskHex(const std::array<uint8_t, 32>& m);
// The attribute data of a CC MAD (MAD byte 64 on).
inline uint8_t* CcData(mad::MadBuffer& m) {
  return m.data() + mad::kGsDataOffset;
}
inline const uint8_t* CcData(const mad::MadBuffer& m) {
  return m.data() + mad::kGsDataOffset;
}

struct LogEntry {
  uint16_t slid = 0, dlid = 0;  // switch: the marked packet's
  uint8_t sl = 0;
  uint32_t local_qp = 0, remote_qp = 0;  // CA
  uint16_t remote_lid = 0;
  uint32_t timestamp = 0;  // 1.024 us ticks
};

struct CongestionLogRead {
  bool is_switch = false;
  uint16_t counter = 0;           // LogEventsCounter / ThresholdEventCounter
  uint32_t now = 0;               // CurrentTimeStamp, 1.024 us ticks
  std::vector<int> port_map;      // switch: the ports whose bit is set
  std::vector<LogEntry> entries;  // as the CCA lists them (newest first)
};

// Reads a CongestionLog GetResp. Entries whose fields are all zero are empty slots.
CongestionLogRead DecodeCongestionLog(const mad::MadBuffer& m);

constexpr double kCcTickSeconds = 1.024e-6;

}  // namespace ibemu::ccmgr
