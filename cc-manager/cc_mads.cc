#include "cc-manager/cc_mads.h"

#include <cstdio>

#include "cc-manager/cca.h"
#include "common/mad/gs_attributes.h"

namespace ibemu::ccmgr {

const char* StateName(CcaState s) {
  switch (s) {
    case CcaState::kPending:
      return "pending";
    case CcaState::kVerified:
      return "verified";
    case CcaState::kMismatch:
      return "mismatch";
    case CcaState::kRefused:
      return "refused";
    case CcaState::kNoAnswer:
      return "no answer";
    case CcaState::kGone:
      return "gone";
  }
  return "?";
}

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

const char* CcAttributeName(uint16_t a) {
  namespace attr = mad::attr;
  switch (a) {
    case attr::kClassPortInfo:
      return "ClassPortInfo";
    case attr::kCongestionKeyInfo:
      return "CongestionKeyInfo";
    case attr::kCongestionLog:
      return "CongestionLog";
    case attr::kSwitchCongestionSetting:
      return "SwitchCongestionSetting";
    case attr::kSwitchPortCongestionSetting:
      return "SwitchPortCongestionSetting";
    case attr::kCaCongestionSetting:
      return "CACongestionSetting";
    case attr::kCongestionControlTable:
      return "CongestionControlTable";
    default:
      return "attribute";
  }
}

std::string CcReplyProblem(const mad::MadBuffer& request, bool answered, uint16_t status) {
  mad::ConstMadView v{request.data()};
  std::string what = std::string(CcAttributeName(v.attr_id())) +
                     (v.method() == mad::method::kSet ? " Set" : " Get") + " (modifier " +
                     std::to_string(v.attr_mod()) + ")";
  if (!answered) return what + ": no answer (a CC_Key the CCA does not accept?)";
  if (status == 0) return "";
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%x", status);
  return what + ": status " + hex;
}

std::string PortMaskHex(const std::array<uint8_t, 32>& m) {
  std::string s = "0x";
  char b[4];
  size_t first = 0;
  while (first < 31 && m[first] == 0) ++first;
  for (size_t i = first; i < m.size(); ++i) {
    std::snprintf(b, sizeof b, i == first ? "%x" : "%02x", m[i]);
    s += b;
  }
  return s;
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
