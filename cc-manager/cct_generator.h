// Congestion Control Tables a manager can generate instead of listing every entry: linear (the
// OPA fabric manager's population, multiplier_i = i * m / a) and quadratic (the thesis's Paper
// III table, 7 us * i^2 / 106^2: multiplier_i = m * i^2 / a^2). Entries are shift:multiplier
// (CCT_Shift 2 bits, CCT_Multiplier 14 bits), multipliers rounded and capped at 16383.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ibemu::ccmgr {

struct CctGenerator {
  std::string kind = "linear";  // linear or quadratic
  int entries = 128;            // 1..128; CCTI_Limit = entries - 1
  int shift = 0;                // 0..3
  int multiplier = 0;           // the multiplier reached at index `at`
  int at = -1;                  // -1: the last entry
};

// Throws std::invalid_argument naming the field that is out of range.
std::vector<uint16_t> GenerateCct(const CctGenerator& g);

}  // namespace ibemu::ccmgr
