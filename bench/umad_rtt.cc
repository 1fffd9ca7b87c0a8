// LD_PRELOAD library for bench/mgmt_bench.sh (RTT=1): times a tool's MAD round trips as the tool
// sees them, from umad_send to the umad_recv that returns the answer (matched by the low 32 bits
// of the TID, which the kernel and our library leave alone), whichever libibumad is underneath
// (this project's, or the real one under ibsim's umad2sim). At exit it appends one line to
// $IBEMU_RTT_OUT (else stderr): MADs sent and answered, percentiles of the round trip, and how
// many were out on average while any was. A request that timed out comes back through umad_recv
// too, and counts as answered then.
#include <algorithm>
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
using ibemu::bench::Percentile;

using Clock = std::chrono::steady_clock;

struct State {
  std::mutex mu;
  std::unordered_map<uint32_t, Clock::time_point> sent;  // by TID, until answered
  std::vector<double> rtt_us;
  uint64_t sends = 0;
  Clock::time_point first, last, changed;
  double busy_s = 0, out_s = 0;  // time with any out; the integral of how many were out
  ~State();
  // How many are out changes at t: the time since the last change is counted first.
  void Account(Clock::time_point t) {
    double dt = std::chrono::duration<double>(t - changed).count();
    if (!sent.empty()) {
      busy_s += dt;
      out_s += dt * static_cast<double>(sent.size());
    }
    changed = t;
  }
};
State g;

uint32_t TidOf(void* umad) {
  static auto get_mad = Next<void* (*)(void*)>("umad_get_mad");
  return ibemu::bench::TidLow(static_cast<const uint8_t*>(get_mad(umad)));
}

State::~State() {
  if (rtt_us.empty()) return;
  std::sort(rtt_us.begin(), rtt_us.end());
  auto at = [&](double q) { return Percentile(rtt_us, q); };
  const char* path = std::getenv("IBEMU_RTT_OUT");
  FILE* f = path ? std::fopen(path, "a") : nullptr;
  std::fprintf(f ? f : stderr,
               "sent %llu answered %zu over %.3f s; round trip p10 %.1f p50 %.1f p90 %.1f us; "
               "%.2f out on average while any was\n",
               static_cast<unsigned long long>(sends), rtt_us.size(),
               std::chrono::duration<double>(last - first).count(), at(0.1), at(0.5), at(0.9),
               busy_s > 0 ? out_s / busy_s : 0.0);
  if (f) std::fclose(f);
}

}  // namespace

extern "C" int umad_send(int fd, int agentid, void* umad, int length, int timeout_ms, int retries) {
  static auto real = Next<int (*)(int, int, void*, int, int, int)>("umad_send");
  uint32_t tid = TidOf(umad);
  {
    std::lock_guard lock(g.mu);
    auto t = Clock::now();
    if (g.sends++ == 0) g.first = g.changed = t;
    g.Account(t);
    g.sent[tid] = t;
  }
  return real(fd, agentid, umad, length, timeout_ms, retries);
}

extern "C" int umad_recv(int fd, void* umad, int* length, int timeout_ms) {
  static auto real = Next<int (*)(int, void*, int*, int)>("umad_recv");
  int r = real(fd, umad, length, timeout_ms);
  if (r < 0) return r;
  uint32_t tid = TidOf(umad);
  std::lock_guard lock(g.mu);
  auto it = g.sent.find(tid);
  if (it == g.sent.end()) return r;  // not an answer to a send of this process
  auto t = Clock::now();
  g.Account(t);
  g.rtt_us.push_back(std::chrono::duration<double, std::micro>(t - it->second).count());
  g.sent.erase(it);
  g.last = t;
  return r;
}
