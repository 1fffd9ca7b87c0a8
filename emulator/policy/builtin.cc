#include "emulator/policy/builtin.h"

#include <mutex>

#include "common/routing/routing_engine.h"

namespace ibemu::policy {

void RegisterBuiltins() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterVlArbiters();
    RegisterInputArbiters();
    RegisterInputQueuings();
    routing::RegisterRoutingEngines();
  });
}

}  // namespace ibemu::policy
