// libFuzzer target: the ibnetdiscover/ibsim topology parser on arbitrary bytes. A file is either
// refused with TopologyError or yields a topology that passes Validate(); nothing else may happen.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "common/topology/ibnetdiscover_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    ibemu::topology::Topology t = ibemu::topology::ParseIbnetdiscover(
        in, "fuzz.topo", {ibemu::link::Width::k4x, ibemu::link::Speed::kQDR});
    t.Validate();
    // What the parser accepts, the writer must write and the parser read back.
    std::ostringstream out;
    ibemu::topology::WriteIbnetdiscover(t, out);
    std::istringstream again(out.str());
    ibemu::topology::Topology u = ibemu::topology::ParseIbnetdiscover(
        again, "rewritten.topo", {ibemu::link::Width::k4x, ibemu::link::Speed::kQDR});
    if (u.nodes.size() != t.nodes.size() || u.cables.size() != t.cables.size()) __builtin_trap();
  } catch (const ibemu::topology::TopologyError&) {
  }
  return 0;
}
