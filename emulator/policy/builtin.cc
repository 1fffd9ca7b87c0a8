#include "emulator/policy/builtin.h"

#include <mutex>

namespace ibemu::policy {

void RegisterBuiltins() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterVlArbiters();
    RegisterInputArbiters();
    RegisterInputQueuings();
    RegisterRoutingEngines();
  });
}

}  // namespace ibemu::policy
