// The files one `ibemu up` instance owns, and how anyone tells whether it is alive.
//
// An instance is alive exactly while it holds an open-file-description write lock on
// <run dir>/<name>.lock (fcntl F_OFD_SETLK). The kernel drops the lock when the process ends,
// however it ends (SIGKILL included), so liveness never depends on a PID that may have been
// reused, and a successor can only claim the name after its predecessor is gone. While it holds
// the lock the instance alone creates and removes the name's state file and sockets; it removes
// them before it lets go, so it never touches a successor's (docs/lifecycle.md).
#pragma once
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/transport/run_dir.h"

namespace ibemu::fabric {

class FabricInstance {
 public:
  // Claims fabric `name` in `dir` (which must exist). Returns null with `err` set when a live
  // instance holds it. Files left by an instance that died without cleaning up are removed and
  // `note` says so.
  static std::unique_ptr<FabricInstance> Claim(const transport::RunDir& dir,
                                               const std::string& name, std::string* err,
                                               std::string* note);
  // Removes the state file and sockets, then the lock file, then lets go of the lock.
  ~FabricInstance();
  FabricInstance(const FabricInstance&) = delete;
  FabricInstance& operator=(const FabricInstance&) = delete;

  const transport::FabricFiles& files() const { return files_; }
  // Publishes the state (clients take its presence to mean "answering"): written to a temporary
  // file, made private, then renamed into place, so nobody reads half of it.
  void WriteState(const nlohmann::json& state);
  // Clients learn the fabric is going away before its sockets close.
  void RemoveState();
  // Makes a socket file ours alone (connect(2) on a Unix socket needs write permission).
  static void MakePrivate(const std::string& path);

 private:
  FabricInstance(transport::FabricFiles files, int fd) : files_(std::move(files)), fd_(fd) {}
  void RemoveFiles();

  transport::FabricFiles files_;
  int fd_;
};

// What a client sees of fabric `name`.
struct FabricProbe {
  enum class State {
    kAbsent,  // no state file: never started, or went down cleanly
    kLive,    // its instance holds the lock
    kDead,    // files left behind, nobody holds the lock: the process was killed
  } state = State::kAbsent;
  nlohmann::json info;  // the state file's contents when readable
};
FabricProbe ProbeFabric(const transport::RunDir& dir, const std::string& name);

// Waits until no instance holds fabric `name` and, when `pidfd` >= 0 (from WatchProcess), until
// that process has ended. Returns false if it has not at the deadline.
bool WaitUntilGone(const transport::RunDir& dir, const std::string& name, int pidfd,
                   std::chrono::milliseconds timeout);

// A pidfd for the live instance's process, taken while it holds the lock, so the PID cannot have
// been reused; -1 when it is not live or the kernel has no pidfds. Close it after use.
int WatchProcess(const transport::RunDir& dir, const std::string& name, int pid);

}  // namespace ibemu::fabric
