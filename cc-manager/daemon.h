// `ibemu-ccmgr run`: the daemon, on one Boost.Asio io_context. Its timers sweep the fabric (and
// program CCAs that appeared) and poll the CongestionLogs; its signal set stops it on SIGINT and
// SIGTERM; its descriptors wait on the CLI's ZeroMQ socket and on the MAD port. Nothing runs
// concurrently: a handler's MAD transactions finish before the next handler starts.
#pragma once
#include <cstdint>
#include <string>

namespace ibemu::ccmgr {

struct DaemonOptions {
  uint64_t port_guid = 0;
  std::string policy_file;
  std::string name = "default";  // control socket ipc://<run dir>/ccmgr-<name>.sock
  std::string export_dir;        // "": no files
  double sweep_seconds = 10;     // discovery, and programming of what appeared
  int poll_ms = 200;             // CongestionLog reads; 0: none
  int timeout_ms = 200;          // per MAD try
  int retries = 2;
};

int RunDaemon(const DaemonOptions& o);

// The control socket of the daemon named `name`, or "" with `error` set.
std::string ControlEndpoint(const std::string& name, std::string* error);

}  // namespace ibemu::ccmgr
