#pragma once

namespace ibemu::policy {

// Registration is explicit: static registrars in a static library are dropped by the linker.
void RegisterVlArbiters();
void RegisterInputArbiters();
void RegisterInputQueuings();
void RegisterBuiltins();

}  // namespace ibemu::policy
