// What a scenario sets for every channel adapter; a header of its own so that scenarios and
// builders need not see the HCA's internals.
#pragma once
#include <cstdint>
#include <string>

#include "common/link/link_rate.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::hca {

struct HcaConfig {
  int data_vls = 1;
  uint32_t vl_buffer_blocks = 128;
  uint32_t mtu = 2048;
  link::ByteRate host_tx;  // payload bytes the host can feed the HCA; 0 = unlimited
  link::ByteRate host_rx;  // payload bytes the host can absorb
  std::string vlarb = "vlarb.ib";
  policy::VlArbConfig vlarb_config;
};

}  // namespace ibemu::hca
