#include "common/mad/cc_settings.h"

#include <cstring>

#include "common/mad/gs_attributes.h"

namespace ibemu::mad {

bool SwitchCongestionSetting::SameAs(const SwitchCongestionSetting& o, uint32_t map) const {
  if (control_map != o.control_map) return false;
  if ((map & 1) && victim_mask != o.victim_mask) return false;
  if ((map & 2) && credit_mask != o.credit_mask) return false;
  if ((map & 4) && (threshold != o.threshold || packet_size != o.packet_size)) return false;
  if ((map & 8) && (cs_threshold != o.cs_threshold || cs_return_delay != o.cs_return_delay))
    return false;
  if ((map & 16) && marking_rate != o.marking_rate) return false;
  return true;
}

bool CaCongestionSetting::SameAs(const CaCongestionSetting& o, uint16_t map) const {
  if (port_control != o.port_control || control_map != o.control_map) return false;
  for (int i = 0; i < 16; ++i)
    if ((map >> i & 1) && !(sl[i] == o.sl[i])) return false;
  return true;
}

void EncodeSwitchSetting(const SwitchCongestionSetting& s, uint8_t* data) {
  using namespace switch_congestion_setting;
  Set(data, kControlMap, s.control_map);
  std::memcpy(data + kVictimMask.byte, s.victim_mask.data(), 32);
  std::memcpy(data + kCreditMask.byte, s.credit_mask.data(), 32);
  Set(data, kThreshold, s.threshold);
  Set(data, kPacketSize, s.packet_size);
  Set(data, kCsThreshold, s.cs_threshold);
  Set(data, kCsReturnDelay, s.cs_return_delay);
  Set(data, kMarkingRate, s.marking_rate);
}

SwitchCongestionSetting DecodeSwitchSetting(const uint8_t* data) {
  using namespace switch_congestion_setting;
  SwitchCongestionSetting s;
  s.control_map = static_cast<uint32_t>(Get(data, kControlMap));
  std::memcpy(s.victim_mask.data(), data + kVictimMask.byte, 32);
  std::memcpy(s.credit_mask.data(), data + kCreditMask.byte, 32);
  s.threshold = static_cast<uint8_t>(Get(data, kThreshold));
  s.packet_size = static_cast<uint8_t>(Get(data, kPacketSize));
  s.cs_threshold = static_cast<uint8_t>(Get(data, kCsThreshold));
  s.cs_return_delay = static_cast<uint16_t>(Get(data, kCsReturnDelay));
  s.marking_rate = static_cast<uint16_t>(Get(data, kMarkingRate));
  return s;
}

void EncodePortElement(const SwitchPortCongestionSetting& p, uint8_t* e) {
  using namespace switch_port_congestion_setting;
  Set(e, kValid, p.valid);
  Set(e, kControlType, p.control_type);
  Set(e, kThreshold, p.threshold);
  Set(e, kPacketSize, p.packet_size);
  Set(e, kCongParmMarkingRate, p.marking_rate);
}

SwitchPortCongestionSetting DecodePortElement(const uint8_t* e) {
  using namespace switch_port_congestion_setting;
  SwitchPortCongestionSetting p;
  p.valid = Get(e, kValid) != 0;
  p.control_type = static_cast<uint8_t>(Get(e, kControlType));
  p.threshold = static_cast<uint8_t>(Get(e, kThreshold));
  p.packet_size = static_cast<uint8_t>(Get(e, kPacketSize));
  p.marking_rate = static_cast<uint16_t>(Get(e, kCongParmMarkingRate));
  return p;
}

namespace {
const uint8_t* CaEntry(const uint8_t* data, int sl) {
  return data + ca_congestion_setting::kEntriesOffset + sl * ca_congestion_setting::kEntryBytes;
}
}  // namespace

void EncodeCaSetting(const CaCongestionSetting& s, uint8_t* data) {
  using namespace ca_congestion_setting;
  Set(data, kPortControl, s.port_control);
  Set(data, kControlMap, s.control_map);
  for (int sl = 0; sl < 16; ++sl) {
    uint8_t* e = data + kEntriesOffset + sl * kEntryBytes;
    Set(e, kCctiTimer, s.sl[sl].ccti_timer);
    Set(e, kCctiIncrease, s.sl[sl].ccti_increase);
    Set(e, kTriggerThreshold, s.sl[sl].trigger_threshold);
    Set(e, kCctiMin, s.sl[sl].ccti_min);
  }
}

CaCongestionSetting DecodeCaSetting(const uint8_t* data) {
  using namespace ca_congestion_setting;
  CaCongestionSetting s;
  s.port_control = static_cast<uint16_t>(Get(data, kPortControl));
  s.control_map = static_cast<uint16_t>(Get(data, kControlMap));
  for (int sl = 0; sl < 16; ++sl) {
    const uint8_t* e = CaEntry(data, sl);
    CaCongestionEntry& x = s.sl[sl];
    x.ccti_timer = static_cast<uint16_t>(Get(e, kCctiTimer));
    x.ccti_increase = static_cast<uint8_t>(Get(e, kCctiIncrease));
    x.trigger_threshold = static_cast<uint8_t>(Get(e, kTriggerThreshold));
    x.ccti_min = static_cast<uint8_t>(Get(e, kCctiMin));
  }
  return s;
}

void EncodeCctBlock(uint16_t ccti_limit, const uint16_t* cct, size_t entries, int block,
                    uint8_t* data) {
  using namespace congestion_control_table;
  Set(data, kCctiLimit, ccti_limit);
  for (int i = 0; i < kEntriesPerBlock; ++i) {
    size_t at = static_cast<size_t>(block * kEntriesPerBlock + i);
    uint16_t v = at < entries ? cct[at] : 0;
    uint8_t* e = data + kEntriesOffset + 2 * i;
    Set(e, kCctShift, v >> 14);
    Set(e, kCctMultiplier, v & 0x3FFF);
  }
}

uint16_t DecodeCctBlock(const uint8_t* data, uint16_t* entries64) {
  using namespace congestion_control_table;
  for (int i = 0; i < kEntriesPerBlock; ++i) {
    const uint8_t* e = data + kEntriesOffset + 2 * i;
    entries64[i] = static_cast<uint16_t>(Get(e, kCctShift) << 14 | Get(e, kCctMultiplier));
  }
  return static_cast<uint16_t>(Get(data, kCctiLimit));
}

}  // namespace ibemu::mad
