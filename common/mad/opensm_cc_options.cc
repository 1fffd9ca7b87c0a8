#include "common/mad/opensm_cc_options.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace ibemu::mad {

const std::set<std::string>& SwitchCcOptions() {
  static const std::set<std::string> k = {"cc_sw_cong_setting_control_map",
                                          "cc_sw_cong_setting_victim_mask",
                                          "cc_sw_cong_setting_credit_mask",
                                          "cc_sw_cong_setting_threshold",
                                          "cc_sw_cong_setting_packet_size",
                                          "cc_sw_cong_setting_credit_starvation_threshold",
                                          "cc_sw_cong_setting_credit_starvation_return_delay",
                                          "cc_sw_cong_setting_marking_rate"};
  return k;
}

const std::set<std::string>& CaCcOptions() {
  static const std::set<std::string> k = {"cc_ca_cong_setting_port_control",
                                          "cc_ca_cong_setting_control_map",
                                          "cc_ca_cong_setting_ccti_timer",
                                          "cc_ca_cong_setting_ccti_increase",
                                          "cc_ca_cong_setting_trigger_threshold",
                                          "cc_ca_cong_setting_ccti_min",
                                          "cc_cct"};
  return k;
}

bool IsPerSlCcOption(const std::string& key) {
  return key == "cc_ca_cong_setting_ccti_timer" || key == "cc_ca_cong_setting_ccti_increase" ||
         key == "cc_ca_cong_setting_trigger_threshold" || key == "cc_ca_cong_setting_ccti_min";
}

uint64_t ParseCcNumber(const std::string& v, uint64_t max) {
  uint64_t x = 0;
  try {
    size_t used = 0;
    x = std::stoull(v, &used, 0);
    if (used != v.size() || v.empty() || v[0] == '-') throw std::invalid_argument(v);
  } catch (const std::exception&) {
    throw CcOptionError("'" + v + "' is not a number (decimal or 0x hex)");
  }
  if (x > max) throw CcOptionError(v + " is out of range (0.." + std::to_string(max) + ")");
  return x;
}

std::array<uint8_t, 32> ParseCcMask(const std::string& v) {
  if (v.rfind("0x", 0) != 0 || v.size() < 3 || v.size() > 66)
    throw CcOptionError("'" + v + "' is not a 256-bit mask (0x and up to 64 hex digits)");
  std::array<uint8_t, 32> m{};
  std::string hex = v.substr(2);
  for (size_t i = 0; i < hex.size(); ++i) {
    char ch = hex[hex.size() - 1 - i];
    if (!std::isxdigit(static_cast<unsigned char>(ch))) throw CcOptionError("bad hex digit");
    int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : std::tolower(ch) - 'a' + 10;
    m[31 - i / 2] |= static_cast<uint8_t>(d << (4 * (i % 2)));
  }
  return m;
}

uint16_t ParseShiftMultiplier(const std::string& v) {
  unsigned shift = 0, mult = 0;
  char extra = 0;
  if (v.find(':') == std::string::npos ||
      std::sscanf(v.c_str(), "%u:%u%c", &shift, &mult, &extra) != 2 || shift > 3 || mult > 0x3FFF)
    throw CcOptionError("'" + v + "' is not shift:multiplier (shift 0..3, multiplier 0..16383)");
  return static_cast<uint16_t>(shift << 14 | mult);
}

void SetCcOption(const std::string& k, const std::string& v, CcSettings* sent) {
  SwitchCongestionSetting& sw = sent->sw;
  CaCongestionSetting& ca = sent->ca;
  if (k == "cc_sw_cong_setting_control_map") {
    sw.control_map = static_cast<uint32_t>(ParseCcNumber(v, 0x1F));
  } else if (k == "cc_sw_cong_setting_victim_mask") {
    sw.victim_mask = ParseCcMask(v);
  } else if (k == "cc_sw_cong_setting_credit_mask") {
    sw.credit_mask = ParseCcMask(v);
  } else if (k == "cc_sw_cong_setting_threshold") {
    sw.threshold = static_cast<uint8_t>(ParseCcNumber(v, 15));
  } else if (k == "cc_sw_cong_setting_packet_size") {
    sw.packet_size = static_cast<uint8_t>(ParseCcNumber(v, 255));
  } else if (k == "cc_sw_cong_setting_credit_starvation_threshold") {
    sw.cs_threshold = static_cast<uint8_t>(ParseCcNumber(v, 15));
  } else if (k == "cc_sw_cong_setting_credit_starvation_return_delay") {
    sw.cs_return_delay = ParseShiftMultiplier(v);
  } else if (k == "cc_sw_cong_setting_marking_rate") {
    sw.marking_rate = static_cast<uint16_t>(ParseCcNumber(v, 0xFFFF));
  } else if (k == "cc_ca_cong_setting_port_control") {
    ca.port_control = static_cast<uint16_t>(ParseCcNumber(v, 1));
  } else if (k == "cc_ca_cong_setting_control_map") {
    ca.control_map = static_cast<uint16_t>(ParseCcNumber(v, 0xFFFF));
  } else if (k == "cc_cct") {
    sent->cct.clear();
    std::stringstream list(v);
    for (std::string e; std::getline(list, e, ',');) sent->cct.push_back(ParseShiftMultiplier(e));
    if (sent->cct.size() > kMaxCctEntries)
      throw CcOptionError(std::to_string(sent->cct.size()) + " entries; the table holds 128");
  } else if (IsPerSlCcOption(k)) {
    throw CcOptionError("is set per SL: '" + k + " <sl> <value>'");
  } else {
    throw CcOptionError("not a congestion-control option");
  }
}

void SetPerSlCcOption(const std::string& k, int sl, const std::string& v, CcSettings* sent) {
  if (sl < 0 || sl > 15) throw CcOptionError("SL " + std::to_string(sl) + " is not 0..15");
  CaCongestionEntry& e = sent->ca.sl[static_cast<size_t>(sl)];
  if (k == "cc_ca_cong_setting_ccti_timer") {
    e.ccti_timer = static_cast<uint16_t>(ParseCcNumber(v, 0xFFFF));
  } else if (k == "cc_ca_cong_setting_ccti_increase") {
    e.ccti_increase = static_cast<uint8_t>(ParseCcNumber(v, 0xFF));
  } else if (k == "cc_ca_cong_setting_trigger_threshold") {
    e.trigger_threshold = static_cast<uint8_t>(ParseCcNumber(v, 0xFF));
  } else if (k == "cc_ca_cong_setting_ccti_min") {
    e.ccti_min = static_cast<uint8_t>(ParseCcNumber(v, 0xFF));
  } else {
    throw CcOptionError("not a per-SL congestion-control option");
  }
}

}  // namespace ibemu::mad
