#include "cc-manager/cc_mads.h"

#include "common/mad/gs_attributes.h"

namespace ibemu::ccmgr {

mad::MadBuffer BuildCcMad(uint8_t method, uint16_t attr, uint32_t attr_mod, uint64_t cc_key) {
  mad::MadBuffer m{};
  uint8_t* b = m.data();
  mad::Set(b, mad::hdr::kBaseVersion, 1);
  mad::Set(b, mad::hdr::kMgmtClass, mad::mgmt_class::kCongestion);
  mad::Set(b, mad::hdr::kClassVersion, 2);
  mad::Set(b, mad::hdr::kMethod, method);
  mad::Set(b, mad::hdr::kAttrId, attr);
  mad::Set(b, mad::hdr::kAttrMod, attr_mod);
  mad::Set(b, mad::hdr::kCcKey, cc_key);
  return m;
}

CongestionLogRead DecodeCongestionLog(const mad::MadBuffer& m) {
  using namespace mad::congestion_log;
  const uint8_t* log = m.data() + mad::kCcLogDataOffset;
  CongestionLogRead r;
  r.is_switch = mad::Get(log, kLogType) == kLogTypeSwitch;
  if (r.is_switch) {
    r.counter = static_cast<uint16_t>(mad::Get(log, kLogEventsCounter));
    r.now = static_cast<uint32_t>(mad::Get(log, kSwitchCurrentTimeStamp));
    const uint8_t* map = log + kPortMap.byte;
    for (int port = 0; port < 256; ++port)
      if (map[31 - port / 8] >> (port % 8) & 1) r.port_map.push_back(port);
    for (int i = 0; i < kSwitchEntries; ++i) {
      const uint8_t* x = log + kSwitchEntriesOffset + i * kSwitchEntryBytes;
      LogEntry e;
      e.slid = static_cast<uint16_t>(mad::Get(x, kEntrySlid));
      e.dlid = static_cast<uint16_t>(mad::Get(x, kEntryDlid));
      e.sl = static_cast<uint8_t>(mad::Get(x, kEntrySl));
      e.timestamp = static_cast<uint32_t>(mad::Get(x, kEntryTimestamp));
      if (e.slid == 0 && e.dlid == 0 && e.timestamp == 0) break;
      r.entries.push_back(e);
    }
  } else {
    r.counter = static_cast<uint16_t>(mad::Get(log, kThresholdEventCounter));
    r.now = static_cast<uint32_t>(mad::Get(log, kCaCurrentTimeStamp));
    for (int i = 0; i < kCaEntries; ++i) {
      const uint8_t* x = log + kCaEntriesOffset + i * kCaEntryBytes;
      LogEntry e;
      e.local_qp = static_cast<uint32_t>(mad::Get(x, kCaEntryLocalQp));
      e.sl = static_cast<uint8_t>(mad::Get(x, kCaEntrySl));
      e.remote_qp = static_cast<uint32_t>(mad::Get(x, kCaEntryRemoteQp));
      e.remote_lid = static_cast<uint16_t>(mad::Get(x, kCaEntryRemoteLid));
      e.timestamp = static_cast<uint32_t>(mad::Get(x, kCaEntryTimestamp));
      if (e.local_qp == 0 && e.remote_lid == 0 && e.timestamp == 0) break;
      r.entries.push_back(e);
    }
  }
  return r;
}

}  // namespace ibemu::ccmgr
