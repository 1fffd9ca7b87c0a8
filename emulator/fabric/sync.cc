#include "emulator/fabric/sync.h"

#include <algorithm>
#include <cstdio>

namespace ibemu::fabric {
namespace {

SimTime Add(SimTime a, SimTime b) {
  return a >= INT64_MAX - b ? INT64_MAX : a + b;
}

}  // namespace

bool IsBridge(const std::vector<std::vector<SimTime>>& la, uint32_t self, uint32_t q) {
  const size_t n = la.size();
  std::vector<char> seen(n, 0);
  std::vector<uint32_t> todo{q};
  seen[q] = 1;
  while (!todo.empty()) {
    uint32_t u = todo.back();
    todo.pop_back();
    for (uint32_t v = 0; v < n; ++v) {
      if (seen[v] || (la[u][v] == INT64_MAX && la[v][u] == INT64_MAX)) continue;
      if (u == q && v == self) continue;  // the cables in question
      if (v == self) return false;
      seen[v] = 1;
      todo.push_back(v);
    }
  }
  return true;
}

Sync::Sync(const std::vector<std::vector<SimTime>>& la, uint32_t self, SimTime duration)
    : index_(la.size(), -1), duration_(duration) {
  for (uint32_t q = 0; q < la.size(); ++q) {
    if (q == self || la[self][q] == INT64_MAX) continue;
    Neighbour nb;
    nb.q = q;
    nb.bridge = IsBridge(la, self, q);
    nb.la_out = la[self][q];
    nb.la_in = la[q][self];
    // Before its first batch, a neighbour's events are at least one lookahead after time 0.
    nb.promise_in = nb.la_in;
    if (nb.bridge)
      round_trip_ = std::min(round_trip_, Add(nb.la_out, nb.la_in));
    else
      step_ = std::min(step_, nb.la_out);
    index_[q] = static_cast<int>(nbrs_.size());
    nbrs_.push_back(nb);
  }
}

SimTime Sync::Horizon(const Neighbour& nb) const {
  SimTime h = nb.promise_in;
  if (nb.bridge)
    for (const auto& [number, t] : nb.pending) h = std::min(h, Add(t, nb.la_in));
  return h;
}

SimTime Sync::Bound(SimTime next, SimTime now) const {
  SimTime horizons = INT64_MAX;
  for (const Neighbour& nb : nbrs_) horizons = std::min(horizons, Horizon(nb));
  SimTime b = std::min(duration_, horizons);
  // What this process sends a neighbour across a bridge from now on (at its next event, or at
  // one that comes in) comes back no earlier than the round trip.
  b = std::min(b, Add(std::min(next, horizons), round_trip_));
  // Never run more than one lookahead past our own next event before promising again: two
  // processes that each ran as far as allowed would settle into taking turns (each running two
  // lookaheads while the other waits); this keeps them in step, working at once.
  if (next != INT64_MAX) b = std::min(b, Add(std::max(next, now), step_));
  return b;
}

void Sync::Promises(SimTime next,
                    const std::function<void(Neighbour&, SimTime, SimTime, uint32_t)>& send,
                    const std::function<Waiting(uint32_t)>& waiting) {
  const size_t n = nbrs_.size();
  // The two smallest horizons, so that each bridge neighbour's own can be left out. The events
  // about to go out count as sent already: a promise to one neighbour must cover what another
  // sends back in answer to them.
  std::vector<Waiting>& w = waiting_;
  w.resize(n);
  horizon_.resize(n);
  SimTime h1 = INT64_MAX, h2 = INT64_MAX;
  size_t i1 = n;
  for (size_t i = 0; i < n; ++i) {
    const Neighbour& nb = nbrs_[i];
    w[i] = waiting(nb.q);
    SimTime h = Horizon(nb);
    if (nb.bridge && w[i].count > 0) h = std::min(h, Add(w[i].min_time, nb.la_in));
    horizon_[i] = h;
    if (h < h1) {
      h2 = h1;
      h1 = h;
      i1 = i;
    } else if (h < h2) {
      h2 = h;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    Neighbour& nb = nbrs_[i];
    SimTime first = std::min(next, nb.bridge && i == i1 ? h2 : h1);
    SimTime promise = Add(first, nb.la_out);
    // A promise about the same acknowledged batches never goes back: the earlier one still holds.
    // Across a bridge, a new acknowledgement makes a new promise, which may be smaller (the
    // batches it covers are now this process's to account for).
    if (!nb.bridge || nb.got == nb.ack_sent) promise = std::max(promise, nb.promised);
    // What this process needs from nb: a horizon past its next event (beyond that, a horizon
    // changes neither how far it runs nor what it promises), past the end of the run, and past
    // what the others still wait for passed on (a neighbour r that needs a promise above N gets it
    // once every other horizon is above N - la_out). Of these, the first that nb's horizon has
    // not passed yet.
    const SimTime h = horizon_[i];
    SimTime need = INT64_MAX;
    auto consider = [&](SimTime x) {
      if (x >= h) need = std::min(need, x);
    };
    consider(next);
    consider(duration_ - 1);
    for (size_t r = 0; r < n; ++r)
      if (nbrs_[r].need_in != kUnknown && nbrs_[r].need_in != INT64_MAX &&
          nbrs_[r].promised <= nbrs_[r].need_in && !(nb.bridge && r == i))
        consider(nbrs_[r].need_in - nbrs_[r].la_out);
    // A promise goes to a neighbour when it first lets the neighbour go on: promises below its
    // need are of no use to it. This process tells a neighbour what it needs when that changed
    // and the neighbour's promise is short of it.
    // The promise that reaches the end of the run always goes: the neighbour may need it after
    // this process has stopped listening.
    bool wanted = promise > nb.promised &&
                  (nb.need_in == kUnknown || (nb.promised <= nb.need_in && promise > nb.need_in) ||
                   (nb.promised < duration_ && promise >= duration_));
    // A larger need than the one told waits until nb's promise has passed that one: until then
    // nb sends its promise when it passes the old need anyway, and this process, if still short,
    // tells it the new one then (telling it at every event of this process, as the need follows
    // the next event, made a third of the batches of a switch cut per device). A smaller need
    // always goes: nb would otherwise hold back a promise this process needs.
    bool waits = need != INT64_MAX && need != nb.need_sent &&
                 (nb.need_sent < 0 || nb.need_sent == INT64_MAX || need < nb.need_sent ||
                  nb.promise_in > nb.need_sent);
    // An acknowledgement goes when the batches it covers hold the neighbour back.
    bool ack = nb.owed_min != INT64_MAX &&
               (nb.need_in == kUnknown ||
                (nb.need_in != INT64_MAX && Add(nb.owed_min, nb.la_out) <= nb.need_in));
    if (w[i].count == 0 && !ack && !wanted && !waits) continue;
    nb.promised = promise;
    nb.ack_sent = nb.got;
    nb.owed_min = INT64_MAX;
    nb.need_sent = need;
    send(nb, promise, need, nb.got);
  }
}

void Sync::Sent(Neighbour& nb, uint32_t count, SimTime min_time) {
  ++nb.sent;
  if (nb.bridge && count > 0) nb.pending.emplace_back(nb.sent, min_time);
}

void Sync::Received(uint32_t q, SimTime promise, SimTime need, uint32_t ack, uint32_t count,
                    SimTime min_time) {
  Neighbour& nb = nbrs_[index_[q]];
  ++nb.got;
  nb.need_in = need;
  if (count > 0) nb.owed_min = std::min(nb.owed_min, min_time);
  nb.promise_in = nb.bridge ? promise : std::max(nb.promise_in, promise);
  while (!nb.pending.empty() && nb.pending.front().first <= ack) nb.pending.pop_front();
}

std::string Sync::Describe() const {
  std::string out;
  for (const Neighbour& nb : nbrs_) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "  to/from %u%s: promised %lld (it needs %lld), it promised %lld (we need "
                  "%lld), %zu batches unacknowledged\n",
                  nb.q, nb.bridge ? " (bridge)" : "", static_cast<long long>(nb.promised),
                  static_cast<long long>(nb.need_in), static_cast<long long>(nb.promise_in),
                  static_cast<long long>(nb.need_sent), nb.pending.size());
    out += line;
  }
  return out;
}

}  // namespace ibemu::fabric
