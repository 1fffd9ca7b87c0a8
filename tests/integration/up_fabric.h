// A fabric brought up with `ibemu up` for the length of one test, and the tools around it: run
// a program on an HCA port through `ibemu exec`, start OpenSM and wait for SUBNET UP.
#pragma once
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/cli_util.h"

namespace ibemu::testing {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

inline std::string Src(const std::string& rel) {
  return std::string(IBEMU_SOURCE_DIR) + "/" + rel;
}

// A TCP port for a test program's out-of-band connection (perftest, the pingpongs): one the
// kernel gives to a socket bound to port 0, so tests running side by side (ctest -j) do not
// pick the same one, as ports derived from their pids did.
inline std::string FreeTcpPort() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (s >= 0 && bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (s >= 0) close(s);
  return std::to_string(port);
}

inline bool HaveTool(const std::string& t) {
  return Shell("command -v " + t + " >/dev/null").status == 0 || fs::exists("/usr/sbin/" + t);
}

// Waits up to `seconds` for a child process to end (its status in *status); when it does not,
// kills it and its process group (UpFabric::Spawn gives each tool its own) and returns false. A
// server whose client never came would otherwise hang the test for good.
inline bool WaitForExit(pid_t pid, double seconds, int* status = nullptr) {
  int st = 0;
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (waitpid(pid, &st, WNOHANG) == 0) {
    if (Clock::now() > until) {
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &st, 0);
      if (status) *status = st;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (status) *status = st;
  return true;
}

// A fabric that is up for the length of one test, with its own run directory and name.
class UpFabric {
 public:
  UpFabric(const std::string& file, const std::vector<std::string>& extra) {
    name_ = "mgmt" + std::to_string(getpid()) + "_" + std::to_string(++count_);
    dir_ = tmp_.path();
    setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
    std::vector<std::string> args{"up", file, "--name", name_, "-q", "-o", dir_ + "/results"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = SpawnIbemu(args, dir_ + "/up.log");
    // The state file appears (renamed into place) once the fabric answers; bounded, so a fabric
    // that never comes up fails the test that uses it instead of hanging it.
    ready_ = Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " status --wait 30 --name " +
                   name_ + " >/dev/null")
                 .status == 0;
    if (!ready_) {
      ADD_FAILURE() << "fabric '" << name_ << "' did not answer within 30 s:\n"
                    << ReadFile(dir_ + "/up.log");
    }
  }
  // Whether `ibemu status` answered within 30 s of the start.
  bool ready() const { return ready_; }
  ~UpFabric() { Down(); }
  // Runs a tool on node:port; stdout and stderr together.
  CliResult Exec(const std::string& port, const std::string& cmd) const {
    return Shell("IBEMU_RUN_DIR=" + dir_ + " timeout 60 " + IBEMU_BINARY + " exec --name " + name_ +
                 " --port " + port + " -- " + cmd);
  }
  // Runs a program on CA `hca` (`ibemu exec --hca`: verbs and umad); stdout and stderr together.
  CliResult ExecOnHca(const std::string& hca, const std::string& cmd, int timeout_s = 60) const {
    return Shell("IBEMU_RUN_DIR=" + dir_ + " timeout " + std::to_string(timeout_s) + " " +
                 IBEMU_BINARY + " exec --name " + name_ + " --hca " + hca + " -- " + cmd);
  }
  // The virtual seconds the fabric has reached (`ibemu status`), or -1.
  double VirtualTime() const {
    CliResult r = Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " status --name " + name_);
    std::smatch m;
    if (!std::regex_search(r.out, m, std::regex("virtual time ([0-9.]+) s"))) return -1;
    return std::stod(m[1]);
  }
  // Waits until virtual time has passed `seconds` (at most `wall_limit` wall seconds): what a
  // test that needs traffic to have run waits for, rather than a guess in wall time.
  bool WaitForVirtualTime(double seconds, double wall_limit = 30) const {
    auto until = Clock::now() + std::chrono::duration<double>(wall_limit);
    while (Clock::now() < until) {
      if (VirtualTime() >= seconds) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  // `ibemu link <node:port> down|up` on this fabric.
  CliResult Link(const std::string& port, const std::string& state) const {
    return Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " link --name " + name_ + " " +
                 port + " " + state);
  }
  pid_t SpawnExec(const std::string& port, const std::string& cmd, const std::string& log) const {
    return Spawn("--port " + port, cmd, log);
  }
  // A program on CA `hca` (`ibemu exec --hca`) in the background, its output to `log`.
  pid_t SpawnOnHca(const std::string& hca, const std::string& cmd, const std::string& log) const {
    return Spawn("--hca " + hca, cmd, log);
  }
  pid_t Spawn(const std::string& where, const std::string& cmd, const std::string& log) const {
    pid_t pid = fork();
    if (pid == 0) {
      setpgid(0, 0);  // its own group, so WaitForExit can stop the tool with its wrapper
      setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
      std::string c = std::string("exec ") + IBEMU_BINARY + " exec --name " + name_ + " " + where +
                      " -- " + cmd + " >" + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", c.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  }
  void Down() {
    if (pid_ <= 0) return;
    down_ = Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " down --name " + name_);
    // `ibemu down` returns once the process has ended; give it a moment to be reaped, and never
    // leave a fabric running behind a failed test.
    WaitForExit(pid_, 10);
    pid_ = -1;
  }
  const std::string& dir() const { return dir_; }
  pid_t pid() const { return pid_; }
  // What the last Down() printed.
  const CliResult& down_result() const { return down_; }
  const std::string& name() const { return name_; }

 private:
  static inline int count_ = 0;
  TempDir tmp_{"mgmt"};  // the run directory, results and logs; removed with the fabric
  std::string name_, dir_;
  pid_t pid_ = -1;
  bool ready_ = false;
  CliResult down_;
};

inline bool WaitForLine(const std::string& file, const std::string& what, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    if (ReadFile(file).find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Starts OpenSM on `port` (node:port) and waits for SUBNET UP; returns its pid (the log is
// <dir>/opensm.log).
// `conf_sed` is a further sed script applied to the generated opensm.conf (options to set).
inline pid_t StartOpenSm(const UpFabric& f, const std::string& port = "H1:1",
                         int sweep_seconds = 10, const std::string& conf_sed = "") {
  std::string conf = f.dir() + "/opensm.conf";
  Shell("opensm -c " + conf + " >/dev/null");
  Shell(
      "sed -i 's/^force_log_flush .*/force_log_flush TRUE/; s/^sweep_interval .*/sweep_interval " +
      std::to_string(sweep_seconds) + "/' " + conf);
  if (!conf_sed.empty()) Shell("sed -i '" + conf_sed + "' " + conf);
  setenv("OSM_CACHE_DIR", f.dir().c_str(), 1);
  std::string log = f.dir() + "/opensm.log";
  pid_t pid = f.SpawnExec(port, "opensm -F " + conf + " -f " + log, f.dir() + "/osm.out");
  if (!WaitForLine(log, "SUBNET UP", 30)) {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    return -1;
  }
  return pid;
}

inline void StopProcess(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  int st = 0;
  waitpid(pid, &st, 0);
}

// A subnet manager (OpenSM or ibemu-fabricmgr) started through `ibemu exec`; stopped at the
// latest when the test ends.
struct SmProcess {
  pid_t pid = -1;
  std::string log;  // its log file
  SmProcess() = default;
  SmProcess(const SmProcess&) = delete;
  SmProcess& operator=(const SmProcess&) = delete;
  ~SmProcess() { Stop(); }
  void Stop() {
    StopProcess(pid);
    pid = -1;
  }
  std::string Log() const { return ReadFile(log); }
};

// The output port ibroute lists for `lid`, or -1.
inline int RoutePort(const std::string& ibroute, int64_t lid) {
  char entry[24];
  std::snprintf(entry, sizeof entry, "0x%04llx ", static_cast<long long>(lid));
  auto at = ibroute.find(entry);
  if (at == std::string::npos) return -1;
  return std::atoi(ibroute.c_str() + at + std::strlen(entry));
}

// Asks `done` every 100 ms for up to 5 s; whether it said yes.
template <typename Done>
bool PollFor(Done done) {
  for (int i = 0; i < 50; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done()) return true;
  }
  return false;
}

// Whether the port at the end of a directed route (from `via`) is Active.
inline bool PortActive(const UpFabric& f, const std::string& via, const std::string& dr_port) {
  return f.Exec(via, "smpquery -D portinfo " + dr_port)
             .out.find("LinkState:.......................Active") != std::string::npos;
}

// The number, decimal or 0x hex, after "Name:....." in a tool's dump, or -1.
inline int64_t DumpField(const std::string& out, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex(name + ":\\.+(0x[0-9a-fA-F]+|[0-9]+)"))) return -1;
  return std::stoll(m[1], nullptr, 0);
}

}  // namespace ibemu::testing
