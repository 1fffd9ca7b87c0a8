#include "cc-manager/cct_generator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ibemu::ccmgr {

std::vector<uint16_t> GenerateCct(const CctGenerator& g) {
  if (g.kind != "linear" && g.kind != "quadratic")
    throw std::invalid_argument("generator: '" + g.kind + "' is not linear or quadratic");
  if (g.entries < 1 || g.entries > 128)
    throw std::invalid_argument("entries: " + std::to_string(g.entries) + " is not 1..128");
  if (g.shift < 0 || g.shift > 3)
    throw std::invalid_argument("shift: " + std::to_string(g.shift) + " is not 0..3");
  if (g.multiplier < 0 || g.multiplier > 0x3FFF)
    throw std::invalid_argument("multiplier: " + std::to_string(g.multiplier) + " is not 0..16383");
  int at = g.at < 0 ? g.entries - 1 : g.at;
  if (at < 1 || at > 127)
    throw std::invalid_argument("at: " + std::to_string(at) + " is not 1..127");
  std::vector<uint16_t> t(static_cast<size_t>(g.entries));
  for (int i = 0; i < g.entries; ++i) {
    double x = static_cast<double>(i) / at;
    double m = g.multiplier * (g.kind == "linear" ? x : x * x);
    auto mult = static_cast<uint16_t>(std::min(0x3FFFL, std::lround(m)));
    t[static_cast<size_t>(i)] = static_cast<uint16_t>(g.shift << 14 | mult);
  }
  return t;
}

}  // namespace ibemu::ccmgr
