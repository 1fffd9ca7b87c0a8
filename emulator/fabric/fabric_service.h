// `ibemu up`: a fabric that stays up, for programs that live in wall-clock time (management tools
// through the libibumad library of issue 3, verbs and MPI programs through the host library).
//
// Time model. A run with only synthetic traffic is as fast as possible and deterministic. A fabric
// that is up for external agents is paced: virtual time follows wall time at a stated ratio
// (--pace 1 is real time; 0.01 runs the fabric 100x slower than real hardware, so that a slow host
// program still sees a fast network). The engine advances in slices of wall time; anything an agent
// asks is applied at the start of the next slice and recorded with that virtual time, so the log
// of injections replays the run. When the engine cannot keep up with the pace it says how far it
// is behind instead of silently stretching time.
#pragma once
#include <string>
#include <vector>

#include "emulator/scenario/scenario.h"

namespace ibemu::fabric {

struct UpOptions {
  std::string name = "default";          // several fabrics can be up at once under different names
  double pace = 1.0;                     // virtual seconds per wall second; 0 = as fast as possible
  link::SimTime slice = link::kPsPerMs;  // wall time between pacing checks (1 ms steps)
  std::string results_dir;  // where `ibemu down` leaves results; default results/<name>-up
  bool quiet = false;
};

// Runs until `ibemu down`, SIGINT or SIGTERM; writes results; returns the exit status. The
// fabric's files live in the run directory (common/transport/run_dir.h) and belong to this
// instance alone (fabric_instance.h).
int Up(scenario::Scenario s, const UpOptions& o);
// Asks the fabric to go down and returns once its process has ended (results written), or
// removes what a killed fabric left. Returns the exit status.
int Down(const std::string& name, double timeout_seconds);
// Prints the fabric's virtual time, pace and events; with wait_seconds > 0, first waits that long
// for a fabric that is starting to answer.
int Status(const std::string& name, double wait_seconds = 0);
// The CA nodes of a fabric that is up, in topology order; throws with the reason when it does
// not answer.
std::vector<std::string> ListCas(const std::string& name);
// Disables or enables a port (and so its cable) of a fabric that is up.
int Link(const std::string& name, const std::string& node, int port, bool up);

}  // namespace ibemu::fabric
