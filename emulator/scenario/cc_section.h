// The scenario's `congestion_control:` section: IB CC settings under OpenSM's cc_* option names,
// for the whole fabric and per switch, switch port and CA.
#pragma once
#include <yaml-cpp/yaml.h>

#include "emulator/scenario/scenario.h"
#include "emulator/scenario/yaml_checks.h"

namespace ibemu::scenario {

// Reads `n` (absent: nothing changes) into s->cc; the topology must be loaded already.
void LoadCongestionControl(const YAML::Node& n, const YamlChecks& checks, Scenario* s);

}  // namespace ibemu::scenario
