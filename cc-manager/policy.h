// What ibemu-ccmgr programs: OpenSM's congestion-control options (the same names as in an
// opensm.conf, read from one or from a YAML policy), the CC_Key it manages, per-node and
// per-switch-port overrides, and CCT generators (docs/ccmgr.md, "The policy").
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/mad/cc_settings.h"

namespace ibemu::ccmgr {

class PolicyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One option as given: OpenSM's name, the SL for per-SL options (-1 otherwise), the value text.
struct CcOption {
  std::string key;
  int sl = -1;
  std::string value;
  int line = 0;  // in the policy file (0: a live change)
};

struct CcPolicy {
  std::string file;  // where it was read from ("" for the defaults)
  // The CC_Key the manager presents in every MAD and, with manage_key, writes to every CCA
  // (CongestionKeyInfo) together with the protect bit and lease period.
  uint64_t cc_key = 0;
  bool manage_key = false;
  bool key_protect = false;
  uint16_t key_lease_period = 0;
  int max_outstanding_mads = 500;  // cc_max_outstanding_mads: the transaction window
  mad::CcSettings sent;            // the fabric-wide fields a Set carries
  // Per node (name or GUID as 0x...), applied on top of the fabric-wide options in order.
  std::map<std::string, std::vector<CcOption>> node_options;
  // Per switch port: its SwitchPortCongestionSetting element (Valid set).
  std::map<std::pair<std::string, int>, mad::SwitchPortCongestionSetting> port_settings;

  // What a Set to this node carries: the fabric-wide fields with the node's own on top (the
  // node found by its name or its GUID).
  mad::CcSettings For(const std::string& name, uint64_t guid) const;
  // The element of a switch port: the policy's, or not valid.
  mad::SwitchPortCongestionSetting PortFor(const std::string& name, uint64_t guid, int port) const;
  // A live change; throws PolicyError naming the key when it is not an option or out of range.
  void SetOption(const std::string& node, const CcOption& o);
  void SetPortOption(const std::string& node, int port, const std::string& key,
                     const std::string& value);
};

// Reads a YAML policy (.yaml, .yml) or an opensm.conf (anything else). Errors name the file,
// the line and the key.
CcPolicy LoadPolicy(const std::string& path);
CcPolicy LoadOpenSmConf(const std::string& path);
CcPolicy LoadYamlPolicy(const std::string& path);

}  // namespace ibemu::ccmgr
