#include "cc-manager/congestion_record.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace ibemu::ccmgr {
namespace fs = std::filesystem;

namespace {
constexpr size_t kKept = 10000;
}

CongestionRecord::CongestionRecord(const std::string& dir) : dir_(dir) {
  if (dir_.empty()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  events_.open(fs::path(dir_) / "events.csv");
  marking_.open(fs::path(dir_) / "marking.csv");
  if (!events_ || !marking_) throw std::runtime_error(dir_ + ": cannot write the export files");
  events_ << "seq,time_s,node,port,kind,slid,dlid,sl,local_qp,remote_qp\n";
  marking_ << "time_s,node,port,marks,rate_per_s\n";
  events_.flush();
  marking_.flush();
}

void CongestionRecord::Add(Event e) {
  e.set_seq(++seq_);
  ++events_by_node_[e.node()];
  if (events_.is_open()) {
    char line[256];
    std::snprintf(line, sizeof line, "%llu,%.9f,%s,%d,%s,%u,%u,%u,%u,%u\n",
                  static_cast<unsigned long long>(e.seq()), e.time_s(), e.node().c_str(), e.port(),
                  e.kind().c_str(), e.slid(), e.dlid(), e.sl(), e.local_qp(), e.remote_qp());
    events_ << line;
    events_.flush();
  }
  recent_.push_back(std::move(e));
  if (recent_.size() > kKept) recent_.pop_front();
}

void CongestionRecord::AddMarking(const std::string& node, int port, double t0, double t1,
                                  double marks) {
  auto key = std::make_pair(node, port);
  total_marks_[key] += marks;
  auto [it, fresh] = span_.try_emplace(key, t0, t1);
  if (!fresh) it->second.second = t1;
  if (t1 > t0) series_[key].emplace_back(t1, marks / (t1 - t0));
  if (marking_.is_open() && t1 > t0) {
    char line[160];
    std::snprintf(line, sizeof line, "%.9f,%s,%d,%.3f,%.1f\n", t1, node.c_str(), port, marks,
                  marks / (t1 - t0));
    marking_ << line;
    marking_.flush();
  }
}

std::vector<Event> CongestionRecord::Since(uint64_t after, size_t max) const {
  std::vector<Event> out;
  for (const Event& e : recent_)
    if (e.seq() > after && out.size() < max) out.push_back(e);
  return out;
}

void CongestionRecord::Finish() {
  if (finished_ || dir_.empty()) return;
  finished_ = true;
  try {
    WriteSummaryAndPlot();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibemu-ccmgr: %s: the summary was not written: %s\n", dir_.c_str(),
                 e.what());
  }
}

void CongestionRecord::WriteSummaryAndPlot() {
  events_.flush();
  marking_.flush();
  nlohmann::json j;
  j["events"] = seq_;
  j["events_by_node"] = events_by_node_;
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& [key, marks] : total_marks_) {
    auto [t0, t1] = span_[key];
    // The time series as marking.csv has it, [time_s, marks per second] per poll.
    nlohmann::json series = nlohmann::json::array();
    for (auto [t, rate] : series_[key]) series.push_back({t, rate});
    ports.push_back({{"node", key.first},
                     {"port", key.second},
                     {"marks", marks},
                     {"from_s", t0},
                     {"to_s", t1},
                     {"rate_per_s", t1 > t0 ? marks / (t1 - t0) : 0.0},
                     {"series", series}});
  }
  j["marking"] = ports;
  // Node names come from NodeDescriptions, which need not be UTF-8.
  std::ofstream(fs::path(dir_) / "summary.json")
      << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (series_.empty()) return;
  // One line per switch port that marked, each a block of its own for gnuplot's `index`.
  fs::path data = fs::path(dir_) / "marking.dat";
  fs::path gp = fs::path(dir_) / "marking.gp";
  {
    std::ofstream d(data);
    for (const auto& [key, points] : series_) {
      d << "# " << key.first << " port " << key.second << "\n";
      for (auto [t, rate] : points) d << t << " " << rate << "\n";
      d << "\n\n";
    }
    std::ofstream g(gp);
    g << "set terminal pngcairo size 1000,560 noenhanced\n"
      << "set output '" << (fs::path(dir_) / "marking.png").string() << "'\n"
      << "set title 'FECN marking rate per switch port (ibemu-ccmgr, from the CongestionLogs)'\n"
      << "set xlabel 'time of the CCA (s)'\nset ylabel 'marks per second'\n"
      << "set key outside right\nset grid\nplot ";
    int i = 0;
    for (const auto& [key, points] : series_) {
      if (i) g << ", \\\n     ";
      g << "'" << data.string() << "' index " << i++
        << " using 1:2 with linespoints pt 7 ps 0.5 title '" << key.first << " port " << key.second
        << "'";
    }
    g << "\n";
  }
  std::string cmd = "gnuplot '" + gp.string() + "' >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0)
    std::fprintf(stderr, "ibemu-ccmgr: gnuplot could not draw %s/marking.png\n", dir_.c_str());
}

}  // namespace ibemu::ccmgr
