// OpenSM's congestion-control options (opensm.conf: congestion_control, cc_key, cc_sw_*, cc_ca_*,
// cc_cct) as values of the CC attributes a manager sends. The scenario's congestion_control
// section and ibemu-ccmgr's policy both read them here, so a configuration moves between OpenSM,
// a scenario and the CC manager unchanged. Errors name the value; callers add file, line and key.
#pragma once
#include <array>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "common/mad/cc_settings.h"

namespace ibemu::mad {

class CcOptionError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

const std::set<std::string>& SwitchCcOptions();  // cc_sw_cong_setting_*
const std::set<std::string>& CaCcOptions();      // cc_ca_cong_setting_* and cc_cct
// OpenSM repeats these per SL: "<option> <sl> <value>".
bool IsPerSlCcOption(const std::string& key);

// A number written in decimal or as 0x hex, at most `max`.
uint64_t ParseCcNumber(const std::string& v, uint64_t max);
// A 256-bit port mask as OpenSM writes it: 0x and up to 64 hex digits, bit n = port n.
std::array<uint8_t, 32> ParseCcMask(const std::string& v);
// "shift:multiplier" (CCT entries, CS_ReturnDelay): shift 0..3, multiplier 0..16383.
uint16_t ParseShiftMultiplier(const std::string& v);
constexpr size_t kMaxCctEntries = 128;  // two blocks, as OpenSM's cc_cct takes

// Sets one switch or CA option in `sent`: the raw fields a Set would carry (applied through the
// Control_Maps by whoever stores them), and the whole table for cc_cct. Per-SL options go through
// SetPerSlCcOption. Throws CcOptionError for a value out of range or malformed.
void SetCcOption(const std::string& key, const std::string& value, CcSettings* sent);
void SetPerSlCcOption(const std::string& key, int sl, const std::string& value, CcSettings* sent);

}  // namespace ibemu::mad
