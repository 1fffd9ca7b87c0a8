// The contents of the Congestion Control attributes a CC manager writes (IBA annex A10.4.3), as
// values, and their encoding in a CC MAD's data: what an agent stores and serves, and what a
// manager sends and reads back, in one place. Field layouts are gs_attributes.h's.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ibemu::mad {

struct SwitchCongestionSetting {
  uint32_t control_map = 0;
  std::array<uint8_t, 32> victim_mask{};  // 256-bit port mask as on the wire (big-endian)
  std::array<uint8_t, 32> credit_mask{};
  uint8_t threshold = 0;    // 0 never marks; 1..15 lowest to highest buffer fill
  uint8_t packet_size = 0;  // 64-byte credits; smaller packets are never marked
  uint8_t cs_threshold = 0;
  uint16_t cs_return_delay = 0;  // CCT entry format: shift (2 bits) : multiplier (14 bits)
  uint16_t marking_rate = 0;     // mean number of eligible packets between marks

  // A Set applies only the parts its Control_Map selects: bit 0 Victim_Mask, 1 Credit_Mask,
  // 2 Threshold and Packet_Size, 3 CS_Threshold and CS_ReturnDelay, 4 Marking_Rate.
  void Apply(const SwitchCongestionSetting& w) {
    control_map = w.control_map;
    if (w.control_map & 1) victim_mask = w.victim_mask;
    if (w.control_map & 2) credit_mask = w.credit_mask;
    if (w.control_map & 4) {
      threshold = w.threshold;
      packet_size = w.packet_size;
    }
    if (w.control_map & 8) {
      cs_threshold = w.cs_threshold;
      cs_return_delay = w.cs_return_delay;
    }
    if (w.control_map & 16) marking_rate = w.marking_rate;
  }
  // Equal in every part `control_map` selects (what a read-back must show after a Set).
  bool SameAs(const SwitchCongestionSetting& o, uint32_t map) const;
  void MarkPort(int port) { victim_mask[31 - port / 8] |= static_cast<uint8_t>(1u << (port % 8)); }
};

struct SwitchPortCongestionSetting {
  bool valid = false;
  uint8_t control_type = 0;  // 0 congestion, 1 credit starvation
  uint8_t threshold = 0;
  uint8_t packet_size = 0;
  uint16_t marking_rate = 0;  // Cong_Parm for Control_Type 1
  bool operator==(const SwitchPortCongestionSetting&) const = default;
};

struct CaCongestionEntry {
  uint16_t ccti_timer = 0;  // 1.024 us units
  uint8_t ccti_increase = 0;
  uint8_t trigger_threshold = 0;
  uint8_t ccti_min = 0;
  bool operator==(const CaCongestionEntry&) const = default;
};

struct CaCongestionSetting {
  uint16_t port_control = 0;  // bit 0: 0 QP-based, 1 SL-based
  uint16_t control_map = 0;   // bit n: SL n's entry is valid
  std::array<CaCongestionEntry, 16> sl{};

  // A Set applies Port_Control and the SL entries its Control_Map selects.
  void Apply(const CaCongestionSetting& w) {
    port_control = w.port_control;
    control_map = w.control_map;
    for (int i = 0; i < 16; ++i)
      if (w.control_map >> i & 1) sl[i] = w.sl[i];
  }
  bool SameAs(const CaCongestionSetting& o, uint16_t map) const;
  // The first SL of Control_Map whose CCTI_Min lies above the table's last index (it could
  // never be reached), or -1.
  int SlWithCctiMinAbove(int ccti_limit) const {
    for (int i = 0; i < 16; ++i)
      if ((control_map >> i & 1) && sl[i].ccti_min > ccti_limit) return i;
    return -1;
  }
};

// What a CC manager gives a node, and what the scenario's congestion_control section stands for.
struct CcSettings {
  SwitchCongestionSetting sw;  // applied through its Control_Map, as a Set would be
  CaCongestionSetting ca;      // likewise
  std::vector<uint16_t> cct;   // shift:multiplier; CCTI_Limit = size - 1
};

// The data of each attribute (MAD byte 64 on), both ways.
void EncodeSwitchSetting(const SwitchCongestionSetting& s, uint8_t* data);
SwitchCongestionSetting DecodeSwitchSetting(const uint8_t* data);
void EncodePortElement(const SwitchPortCongestionSetting& p, uint8_t* element);
SwitchPortCongestionSetting DecodePortElement(const uint8_t* element);
void EncodeCaSetting(const CaCongestionSetting& s, uint8_t* data);
CaCongestionSetting DecodeCaSetting(const uint8_t* data);
// Block `block` of a table whose entries are `cct` (missing entries are 0).
void EncodeCctBlock(uint16_t ccti_limit, const uint16_t* cct, size_t entries, int block,
                    uint8_t* data);
uint16_t DecodeCctBlock(const uint8_t* data, uint16_t* entries64);

}  // namespace ibemu::mad
