// Where the host libraries are, for the commands that run programs on an emulated fabric
// (`ibemu exec`, `ibemu mpirun`): our libibumad.so.3 and libibverbs.so.1 must come before the
// system's in the program's LD_LIBRARY_PATH.
#pragma once
#include <string>

namespace ibemu::cli {

// "<umad dir>:<verbs dir>[:<old LD_LIBRARY_PATH>]": $IBEMU_UMAD_LIBDIR and $IBEMU_VERBS_LIBDIR,
// else the build tree beside this executable. Throws naming the target to build when a library
// is missing.
std::string HostLibraryPath();

}  // namespace ibemu::cli
