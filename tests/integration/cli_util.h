// Running ibemu (and other commands) from integration tests.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
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

}  // namespace ibemu::testing
