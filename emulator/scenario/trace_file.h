// The trace file format (docs/traces.md): a replayed application's ranks and their operations.
// Reading checks that every send has its receive, with the same size, and that the ranks can
// all finish when messages take any time at all; it throws ScenarioError naming the file and
// line otherwise.
#pragma once
#include <string>

#include "emulator/hca/trace_program.h"

namespace ibemu::scenario {

// The program with no LIDs yet (the scenario places the ranks).
hca::TraceProgram ReadTraceFile(const std::string& path);

}  // namespace ibemu::scenario
