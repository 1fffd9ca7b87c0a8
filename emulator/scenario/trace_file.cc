#include "emulator/scenario/trace_file.h"

#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "emulator/scenario/scenario.h"

namespace ibemu::scenario {
namespace {

using hca::TraceOp;

class TraceReader {
 public:
  explicit TraceReader(std::string path) : path_(std::move(path)) {}

  hca::TraceProgram Read() {
    std::ifstream in(path_);
    if (!in) throw ScenarioError(path_ + ": cannot open the trace file");
    std::string text;
    int line = 0;
    while (std::getline(in, text)) {
      ++line;
      if (size_t c = text.find('#'); c != std::string::npos) text.resize(c);
      std::istringstream ls(text);
      std::vector<std::string> w;
      for (std::string t; ls >> t;) w.push_back(t);
      if (w.empty()) continue;
      if (prog_.ranks.empty()) {
        Header(w, line);
        continue;
      }
      Operation(w, line);
    }
    if (prog_.ranks.empty()) Fail(line, "no 'ranks N' line: the file holds no trace");
    CheckPairs();
    CheckProgress();
    return std::move(prog_);
  }

 private:
  [[noreturn]] void Fail(int line, const std::string& msg) const {
    throw ScenarioError(path_ + ":" + std::to_string(line) + ": " + msg);
  }

  uint64_t Number(const std::string& s, int line, const char* what, uint64_t max) const {
    size_t used = 0;
    unsigned long long v = 0;
    try {
      if (!s.empty() && s[0] != '-') v = std::stoull(s, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != s.size() || v > max)
      Fail(line, "'" + s + "' is not a " + what + " (0.." + std::to_string(max) + ")");
    return v;
  }

  void Header(const std::vector<std::string>& w, int line) {
    if (w.size() != 2 || w[0] != "ranks")
      Fail(line, "the first line must be 'ranks N' (how many ranks the trace has)");
    uint64_t n = Number(w[1], line, "number of ranks", 65535);
    if (n < 1) Fail(line, "a trace needs at least one rank");
    prog_.ranks.resize(n);
    lines_.resize(n);
  }

  void Operation(const std::vector<std::string>& w, int line) {
    uint32_t rank = static_cast<uint32_t>(
        Number(w[0], line, "rank", static_cast<uint64_t>(prog_.ranks.size() - 1)));
    if (w.size() < 2) Fail(line, "rank " + w[0] + ": no operation (compute, send, recv)");
    const std::string& op = w[1];
    TraceOp o;
    if (op == "compute") {
      if (w.size() != 3) Fail(line, "expected '<rank> compute <duration>'");
      o.kind = TraceOp::kCompute;
      SimTime t = 0;
      // A bare number is nanoseconds; a unit (ps, ns, us, ms, s) may be given.
      bool bare = w[2].find_first_not_of("0123456789.") == std::string::npos;
      if (!ParseDuration(bare ? w[2] + "ns" : w[2], &t) || t < 0)
        Fail(line, "'" + w[2] + "' is not a duration (ns, or with a unit: 2.5us)");
      o.value = static_cast<uint64_t>(t);
    } else if (op == "send" || op == "recv") {
      if (w.size() != 4) Fail(line, "expected '<rank> " + op + " <peer rank> <bytes>'");
      o.kind = op == "send" ? TraceOp::kSend : TraceOp::kRecv;
      o.peer = static_cast<uint32_t>(
          Number(w[2], line, "peer rank", static_cast<uint64_t>(prog_.ranks.size() - 1)));
      if (o.peer == rank) Fail(line, "rank " + w[0] + " cannot " + op + " to itself");
      o.value = Number(w[3], line, "message size in bytes", 0xFFFFFFFFull);
    } else {
      Fail(line, "'" + op + "' is not an operation (compute, send, recv)");
    }
    prog_.ranks[rank].push_back(o);
    lines_[rank].push_back(line);
  }

  // Every message a rank sends to a peer is received there, in order, with its size.
  void CheckPairs() const {
    struct Msg {
      uint64_t bytes;
      int line;
    };
    std::map<std::pair<uint32_t, uint32_t>, std::vector<Msg>> sent, received;  // (from, to)
    for (uint32_t r = 0; r < prog_.ranks.size(); ++r)
      for (size_t i = 0; i < prog_.ranks[r].size(); ++i) {
        const TraceOp& o = prog_.ranks[r][i];
        if (o.kind == TraceOp::kSend) sent[{r, o.peer}].push_back({o.value, lines_[r][i]});
        if (o.kind == TraceOp::kRecv) received[{o.peer, r}].push_back({o.value, lines_[r][i]});
      }
    auto pair = [](std::pair<uint32_t, uint32_t> k) {
      return "rank " + std::to_string(k.first) + " to rank " + std::to_string(k.second);
    };
    for (const auto& [k, s] : sent) {
      auto it = received.find(k);
      size_t got = it == received.end() ? 0 : it->second.size();
      if (got < s.size())
        Fail(s[got].line, pair(k) + ": message " + std::to_string(got + 1) + " of " +
                              std::to_string(s.size()) + " is never received");
      for (size_t i = 0; i < s.size(); ++i)
        if (it->second[i].bytes != s[i].bytes)
          Fail(it->second[i].line, pair(k) + ": receives " + std::to_string(it->second[i].bytes) +
                                       " bytes, but message " + std::to_string(i + 1) +
                                       " is sent with " + std::to_string(s[i].bytes) + " at line " +
                                       std::to_string(s[i].line));
    }
    for (const auto& [k, r] : received) {
      auto it = sent.find(k);
      size_t n = it == sent.end() ? 0 : it->second.size();
      if (n < r.size())
        Fail(r[n].line, pair(k) + ": receive " + std::to_string(n + 1) + " has no message (" +
                            std::to_string(n) + " sent)");
    }
  }

  // Replays the ranks with sends that always go on and receives that wait for their message:
  // if some rank cannot finish, no fabric can make it, so the trace is refused here.
  void CheckProgress() const {
    size_t n = prog_.ranks.size();
    std::vector<size_t> pc(n, 0);
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> in_flight;  // (from, to)
    for (bool moved = true; moved;) {
      moved = false;
      for (uint32_t r = 0; r < n; ++r) {
        const auto& ops = prog_.ranks[r];
        while (pc[r] < ops.size()) {
          const TraceOp& o = ops[pc[r]];
          if (o.kind == TraceOp::kSend) ++in_flight[{r, o.peer}];
          if (o.kind == TraceOp::kRecv) {
            uint64_t& m = in_flight[{o.peer, r}];
            if (m == 0) break;
            --m;
          }
          ++pc[r];
          moved = true;
        }
      }
    }
    for (uint32_t r = 0; r < n; ++r) {
      if (pc[r] == prog_.ranks[r].size()) continue;
      // Every message is sent somewhere (CheckPairs), so the peer is waiting too.
      uint32_t peer = prog_.ranks[r][pc[r]].peer;
      Fail(lines_[r][pc[r]], "the trace deadlocks: rank " + std::to_string(r) +
                                 " waits here for a message from rank " + std::to_string(peer) +
                                 ", which is waiting itself at line " +
                                 std::to_string(lines_[peer][pc[peer]]));
    }
  }

  std::string path_;
  hca::TraceProgram prog_;
  std::vector<std::vector<int>> lines_;  // [rank][op]: the file's line
};

}  // namespace

hca::TraceProgram ReadTraceFile(const std::string& path) {
  return TraceReader(path).Read();
}

}  // namespace ibemu::scenario
