// The policy file (docs/fabricmgr.md): which routing engine, the SM's priority and key, link
// limits, the SL2VL and VLArb tables and the partitions (P_Keys) the SM programs. Every key is
// optional; unknown keys are errors, so a misspelt one is not silently ignored.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibemu::fabricmgr {

// "file:line: field: message", as the scenario loader reports.
class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct VlArbEntry {
  uint8_t vl = 0;
  uint8_t weight = 0;
};

struct Partition {
  std::string name;
  uint16_t pkey = 0x7FFF;            // 15 bits; the membership bit is added per member
  bool all = false;                  // every CA port
  std::vector<std::string> members;  // node names, descriptions or GUIDs
  bool full = true;                  // full (bit 15 set) or limited membership
};

struct Policy {
  std::string file;  // empty: the defaults
  // sm
  uint8_t priority = 0;  // SMInfo priority, 0..15
  uint64_t sm_key = 0;
  uint8_t subnet_timeout = 18;  // PortInfo:SubnetTimeout (4.096 us * 2^n), OpenSM's default
  int sweep_seconds = -1;       // default for --sweep; -1: the command line's
  // routing
  std::string engine = "minhop";
  std::string fallback = "minhop";  // when the engine refuses the topology
  // links
  uint8_t max_mtu = 0;   // NeighborMTU code cap (1 = 256 ... 5 = 4096); 0: both ends' MtuCap
  int max_data_vls = 0;  // 1, 2, 4, 8 or 15; 0: both ends' VLCap
  // qos
  std::optional<std::array<uint8_t, 16>> sl2vl;  // SL -> VL on every port; unset: left alone
  bool vlarb = false;                            // program VLArb (and VLHighLimit)
  uint8_t vl_high_limit = 0;
  std::vector<VlArbEntry> vlarb_high, vlarb_low;
  // partitions; the default partition (0x7FFF, every CA port, full) unless the file says else
  std::vector<Partition> partitions;
};

Policy DefaultPolicy();
// Throws PolicyError.
Policy LoadPolicy(const std::string& file);

struct NodeRecord;
// The P_Key table block 0 a CA port gets from the policy's partitions: index 0 the default
// partition (0x7FFF) when the port is a member of it; full members with bit 15 set.
std::array<uint16_t, 32> PKeyBlockFor(const Policy& p, const NodeRecord& node, int port);

// OperVLs code (IBA 14.2.5.6: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7, 5 = VL0-14) <-> VLs.
int DataVlsOfCode(int code);
int CodeOfDataVls(int vls);

}  // namespace ibemu::fabricmgr
