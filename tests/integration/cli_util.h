// Running ibemu (and other commands) from integration tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ibemu::testing {

struct CliResult {
  int status = -1;  // exit status, -1 if killed by a signal
  std::string out;  // stdout and stderr together
};

// Runs a shell command; stderr joins stdout unless the command redirects it itself.
inline CliResult Shell(const std::string& cmd, bool merge_stderr = true) {
  CliResult r;
  FILE* p = popen((merge_stderr ? cmd + " 2>&1" : cmd).c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> b;
  while (fgets(b.data(), b.size(), p)) r.out += b.data();
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline CliResult Ibemu(const std::string& args) {
  return Shell(std::string(IBEMU_BINARY) + " " + args);
}

// Starts ibemu in the background with stdout and stderr going to `log`; returns its pid.
inline pid_t SpawnIbemu(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!log.empty()) {
      FILE* f = freopen(log.c_str(), "w", stderr);
      (void)f;
      dup2(2, 1);
    }
    std::vector<char*> argv{const_cast<char*>("ibemu")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(IBEMU_BINARY, argv.data());
    _exit(127);
  }
  return pid;
}

// The whole of a file, or "" if it cannot be read.
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A directory of the test's own (mkdtemp under $TMPDIR, else /tmp), removed with everything in
// it when the test ends: tests running side by side under `ctest -j` never share a path.
class TempDir {
 public:
  explicit TempDir(const std::string& what) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/ibemu-" + what + "-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp " + tmpl + " failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace ibemu::testing
