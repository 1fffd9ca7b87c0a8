// What the manager saw of congestion, kept for people: every congestion event it read from the
// CongestionLogs (the last 10000 in memory for `ibemu-ccmgr log --follow`), and with an export
// directory events.csv and marking.csv as they come, then summary.json and marking.png (per-port
// marking rates over the CCAs' time) when the daemon stops (docs/ccmgr.md, "What it writes").
#pragma once
#include <cstdint>
#include <deque>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ccmgr.pb.h"

namespace ibemu::ccmgr {

class CongestionRecord {
 public:
  // `dir` "": nothing is written. Throws std::runtime_error when the directory cannot be made.
  explicit CongestionRecord(const std::string& dir);
  ~CongestionRecord() { Finish(); }  // however the daemon ends, what it saw is written

  // Numbers the event (from 1) and keeps it.
  void Add(Event e);
  // Marks a switch port sent in (t0, t1] of the CCA's time, estimated from its log (marks may
  // be fractional: docs/ccmgr.md).
  void AddMarking(const std::string& node, int port, double t0, double t1, double marks);

  std::vector<Event> Since(uint64_t after, size_t max) const;
  uint64_t last_seq() const { return seq_; }
  // Writes summary.json and marking.png, once; nothing without a directory. Never throws (a
  // failure is reported on stderr).
  void Finish();
  const std::string& dir() const { return dir_; }

 private:
  void WriteSummaryAndPlot();
  std::string dir_;
  bool finished_ = false;
  std::ofstream events_, marking_;
  std::deque<Event> recent_;
  uint64_t seq_ = 0;
  std::map<std::pair<std::string, int>, double> total_marks_;              // (switch, port)
  std::map<std::pair<std::string, int>, std::pair<double, double>> span_;  // first, last time
  std::map<std::pair<std::string, int>, std::vector<std::pair<double, double>>> series_;
  std::map<std::string, uint64_t> events_by_node_;
};

}  // namespace ibemu::ccmgr
