// LD_PRELOAD library for bench/mgmt_bench.sh (RTT=1): how long each MAD stays in the simulator,
// from the read that takes it in to the write of its answer (matched by the low 32 bits of the
// TID), in whichever simulator it is preloaded into:
//   - `ibemu up`: a MAD frame (common/transport/mad_frame.h) of a Send taken in with recv(2) and
//     of a Receive sent with send(2) on the host libraries' Unix socket;
//   - ibsim: its 288-byte struct sim_request, the MAD at byte 32, read(2) from a client's socket
//     and written back with write(2).
// The times are kept per socket, and a socket's line goes to $IBEMU_SIM_RES_OUT (else stderr)
// when the simulator closes it, or at the simulator's exit: its MADs and the percentiles of their
// time in the simulator. `ibemu up` closes a client's socket when the client goes, so each tool
// run gets a line; ibsim keeps a socket per client slot for its whole life and umad2sim hands
// the slot to the next tool, so its line holds every tool that used the slot. Answers to MADs
// this library did not see taken in (traps, the SMA's own) are not counted; an answer is timed
// as its write starts, and counted when that write succeeds.
//
// IBEMU_SIM_BURN_US=X spins X microseconds after each MAD taken in: the simulator then costs X
// more CPU a MAD, which measures how much the tool's time depends on the simulator's CPU.
#undef _FORTIFY_SOURCE  // read and recv are redefined here, not wrapped inline
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "bench/preload.h"

namespace {

using ibemu::bench::Next;
using ibemu::bench::TidLow;

using Clock = std::chrono::steady_clock;

// The two wire formats: the frame's 48-byte header (kind at byte 1: 1 Send, 2 Receive) and
// ibsim's request, both followed by a 256-byte MAD.
constexpr size_t kFrameHeader = 48, kSimRequestHeader = 32, kMad = 256;

// One socket's MADs inside the simulator, until it closes.
struct Session {
  std::unordered_map<uint32_t, Clock::time_point> in;  // by TID, until answered
  std::vector<double> us;
};

// Writes a finished session's line; called with no lock held.
void Report(std::vector<double> us, double burn_us) {
  if (us.empty()) return;
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return ibemu::bench::Percentile(us, q); };
  double sum = 0;
  for (double u : us) sum += u;
  const char* path = std::getenv("IBEMU_SIM_RES_OUT");
  FILE* f = path ? std::fopen(path, "a") : nullptr;
  std::fprintf(f ? f : stderr,
               "%zu MADs on a socket: in the simulator p10 %.1f p50 %.1f p90 %.1f mean %.1f us%s\n",
               us.size(), at(0.1), at(0.5), at(0.9), sum / static_cast<double>(us.size()),
               burn_us > 0 ? " (burn included)" : "");
  if (f) std::fclose(f);
}

struct State {
  std::mutex mu;
  std::unordered_map<int, Session> by_fd;
  double burn_us = 0;
  State() {
    if (const char* b = std::getenv("IBEMU_SIM_BURN_US")) burn_us = std::atof(b);
  }
  void TakenIn(int fd, const uint8_t* mad) {
    const Clock::time_point t = Clock::now();
    {
      std::lock_guard lock(mu);
      by_fd[fd].in[TidLow(mad)] = t;
    }
    if (burn_us > 0) {
      const auto until = t + std::chrono::nanoseconds(static_cast<int64_t>(burn_us * 1000));
      while (Clock::now() < until) {
      }
    }
  }
  void Answered(int fd, const uint8_t* mad, Clock::time_point t) {
    std::lock_guard lock(mu);
    auto s = by_fd.find(fd);
    if (s == by_fd.end()) return;
    auto it = s->second.in.find(TidLow(mad));
    if (it == s->second.in.end()) return;
    s->second.us.push_back(std::chrono::duration<double, std::micro>(t - it->second).count());
    s->second.in.erase(it);
  }
  void Closed(int fd) {
    std::vector<double> us;
    {
      std::lock_guard lock(mu);
      auto s = by_fd.find(fd);
      if (s == by_fd.end()) return;
      us = std::move(s->second.us);
      by_fd.erase(s);
    }
    Report(std::move(us), burn_us);
  }
  void AtExit() {
    std::vector<std::vector<double>> all;
    {
      std::lock_guard lock(mu);
      for (auto& [fd, s] : by_fd) all.push_back(std::move(s.us));
      by_fd.clear();
    }
    for (auto& us : all) Report(std::move(us), burn_us);
  }
};

// Never destroyed: a thread or a destructor that reads or closes after exit began still finds it.
State& S() {
  static State* s = new State;
  return *s;
}

[[gnu::destructor]] void WriteAtExit() {
  S().AtExit();
}

// ibsim's requests come and go on sockets; a file of the same size is not one.
bool IsSocket(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

// Each wrapper leaves errno as the real call set it.
extern "C" ssize_t recv(int fd, void* buf, size_t n, int flags) {
  static auto real = Next<ssize_t (*)(int, void*, size_t, int)>("recv");
  const ssize_t r = real(fd, buf, n, flags);
  const auto* b = static_cast<const uint8_t*>(buf);
  if (r == static_cast<ssize_t>(kFrameHeader + kMad) && b[0] == 0 && b[1] == 1) {
    const int saved = errno;
    S().TakenIn(fd, b + kFrameHeader);
    errno = saved;
  }
  return r;
}

extern "C" ssize_t send(int fd, const void* buf, size_t n, int flags) {
  static auto real = Next<ssize_t (*)(int, const void*, size_t, int)>("send");
  const Clock::time_point t = Clock::now();  // before the call, which may wake the client first
  const ssize_t r = real(fd, buf, n, flags);
  const auto* b = static_cast<const uint8_t*>(buf);
  if (r == static_cast<ssize_t>(n) && n == kFrameHeader + kMad && b[0] == 0 && b[1] == 2) {
    const int saved = errno;
    S().Answered(fd, b + kFrameHeader, t);
    errno = saved;
  }
  return r;
}

extern "C" ssize_t read(int fd, void* buf, size_t n) {
  static auto real = Next<ssize_t (*)(int, void*, size_t)>("read");
  const ssize_t r = real(fd, buf, n);
  if (r == static_cast<ssize_t>(kSimRequestHeader + kMad)) {
    const int saved = errno;
    if (IsSocket(fd)) S().TakenIn(fd, static_cast<const uint8_t*>(buf) + kSimRequestHeader);
    errno = saved;
  }
  return r;
}

extern "C" ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = Next<ssize_t (*)(int, const void*, size_t)>("write");
  const Clock::time_point t = Clock::now();
  const ssize_t r = real(fd, buf, n);
  if (r == static_cast<ssize_t>(n) && n == kSimRequestHeader + kMad) {
    const int saved = errno;
    if (IsSocket(fd)) S().Answered(fd, static_cast<const uint8_t*>(buf) + kSimRequestHeader, t);
    errno = saved;
  }
  return r;
}

// The session ends before the descriptor is let go, so a socket that reuses the number starts
// a new one.
extern "C" int close(int fd) {
  static auto real = Next<int (*)(int)>("close");
  const int saved = errno;
  S().Closed(fd);
  errno = saved;
  return real(fd);
}
