// What a scenario sets for every switch; a header of its own so that scenarios and builders need
// not see the switch's internals.
#pragma once
#include <cstdint>
#include <string>

#include "common/link/link_rate.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::sw {

using link::SimTime;

struct SwitchConfig {
  int data_vls = 1;
  uint32_t vl_buffer_blocks = 128;         // per input port and VL
  SimTime latency = 100 * link::kPsPerNs;  // head in to head eligible (IS4: 100 ns)
  int speedup_milli = 1000;  // crossbar port rate / fastest link rate on the switch, x1000
  // How many times younger packets of an input VL may leave before its oldest one: after that
  // the input feeds only its oldest (a FIFO whose head may be bypassed that often, as in Santos
  // et al.'s switch). 0: no limit, the queuing policy's queues are independent.
  int bypass_limit = 0;
  // Output buffers (a CIOQ switch, as in Ferrer et al.'s MVCM model): the crossbar moves packets
  // from the input buffers into a buffer of this many 64-byte blocks per output port and VL, at
  // the crossbar rate, and the link sends from there. 0: none, the crossbar feeds the link
  // directly (an input-queued switch, the IB switches modelled elsewhere).
  uint32_t output_buffer_blocks = 0;
  // A read port per queue of an input buffer (Paper VI's multi-read-port VOQ switch): an input
  // feeds several outputs at once, each queue at the crossbar rate. False: one read port per
  // input, shared by its queues (one transfer at a time, as the other papers' switches).
  bool read_port_per_queue = false;
  std::string vlarb = "vlarb.ib";
  std::string xbar = "xbar.roundrobin";
  policy::VlArbConfig vlarb_config;
};

}  // namespace ibemu::sw
