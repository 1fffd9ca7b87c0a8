#include "emulator/results/report.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>

#include "emulator/results/atomic_file.h"

namespace ibemu::results {

using link::SimTime;
using stats::BinnedCounter;
using stats::FlowStats;
using stats::FlowTable;

namespace {

double Gbps(int64_t bytes, SimTime ps) {
  return ps > 0 ? static_cast<double>(bytes) * 8.0 * 1000.0 / static_cast<double>(ps) : 0;
}

int64_t WindowSum(const BinnedCounter& c, SimTime interval, SimTime from, SimTime to) {
  int64_t s = 0;
  for (size_t i = static_cast<size_t>(from / interval);
       i < c.bins() && static_cast<SimTime>(i) * interval < to; ++i)
    s += c.at(i);
  return s;
}

std::string Hex(uint64_t v) {
  char b[20];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

std::vector<FlowSummary> Summarize(const scenario::Scenario& s, const fabric::RunResult& r) {
  std::vector<FlowSummary> out;
  const FlowTable& ft = r.flows;
  // The window is whole bins, so the summary matches the CSV exactly.
  SimTime from = s.measure_from / s.interval * s.interval;
  SimTime to = std::min(s.duration, (s.measure_to + s.interval - 1) / s.interval * s.interval);
  for (size_t i = 0; i < ft.flows.size(); ++i) {
    const FlowStats& f = ft.flows[i];
    FlowSummary fs;
    fs.name = ft.names[i];
    fs.rx_gbps = Gbps(WindowSum(f.rx_payload, s.interval, from, to), to - from);
    fs.tx_gbps = Gbps(WindowSum(f.tx_payload, s.interval, from, to), to - from);
    fs.p50_us = static_cast<double>(f.latency.Quantile(0.5)) / 1e6;
    fs.p99_us = static_cast<double>(f.latency.Quantile(0.99)) / 1e6;
    fs.max_us = static_cast<double>(f.latency.max()) / 1e6;
    if (f.latency.count())
      fs.mean_us =
          static_cast<double>(f.latency.sum()) / static_cast<double>(f.latency.count()) / 1e6;
    fs.rx_packets = f.rx_packets;
    fs.rx_fecn = f.rx_fecn;
    out.push_back(fs);
  }
  return out;
}

void PrintTable(const scenario::Scenario& s, const fabric::RunResult& r, std::ostream& out) {
  auto sum = Summarize(s, r);
  out << "scenario " << s.name << "  seed " << s.seed << "  simulated "
      << static_cast<double>(s.duration) / 1e9 << " ms  window "
      << static_cast<double>(s.measure_from) / 1e9 << "-" << static_cast<double>(s.measure_to) / 1e9
      << " ms\n";
  out << std::left << std::setw(14) << "flow" << std::setw(22) << "path" << std::right
      << std::setw(11) << "rx Gb/s" << std::setw(11) << "tx Gb/s" << std::setw(11) << "p50 us"
      << std::setw(11) << "p99 us" << std::setw(11) << "max us" << std::setw(12) << "packets"
      << "\n";
  out << std::fixed;
  for (size_t i = 0; i < sum.size(); ++i) {
    const auto& f = sum[i];
    std::string path;
    if (i < s.flows.size()) {
      const auto& fi = s.flows[i];
      path = fi.src.empty() ? fi.pattern : fi.src + "->" + fi.dst;
      if (fi.src.empty() && !fi.dst.empty()) path = fi.pattern + "->" + fi.dst;
    } else if (i < r.flows.paths.size()) {
      path = r.flows.paths[i];  // a verbs QP's
    }
    out << std::left << std::setw(14) << f.name << std::setw(22) << path << std::right
        << std::setprecision(3) << std::setw(11) << f.rx_gbps << std::setw(11) << f.tx_gbps
        << std::setprecision(2) << std::setw(11) << f.p50_us << std::setw(11) << f.p99_us
        << std::setw(11) << f.max_us << std::setw(12) << f.rx_packets << "\n";
  }
  for (size_t i = 0; i < s.flows.size() && i < r.flows.flows.size(); ++i) {
    const auto& fi = s.flows[i];
    if (fi.trace_ranks == 0) continue;
    const FlowStats& f = r.flows.flows[i];
    out << "trace " << fi.name << ": " << f.ranks_done << " of " << fi.trace_ranks
        << " ranks finished";
    if (f.ranks_done == fi.trace_ranks)
      out << ", execution time " << std::setprecision(3)
          << static_cast<double>(f.finish - fi.start) / 1e6 << " us";
    else
      out << " by the end of the run (give it a longer duration)";
    out << "\n";
  }
  out.unsetf(std::ios::fixed);
  out << "events " << r.events << "  packet-hops " << r.packet_hops << "  wall "
      << std::setprecision(3) << r.wall_seconds << " s  peak RSS " << r.peak_rss_kb / 1024
      << " MiB\n";
  if (r.cross_batches)
    out << "cross-process: " << r.cross_frames << " event frames, " << r.cross_frame_bytes
        << " bytes (" << (r.cross_frames ? r.cross_frame_bytes / r.cross_frames : 0)
        << " per frame incl. batch headers), " << r.cross_batches << " batches\n";
  for (const auto& p : r.process_stats)
    out << "  process " << p.partition << ": " << p.events << " events, " << std::setprecision(3)
        << p.run_s << " s running, " << p.wait_s << " s waiting, " << p.setup_s << " s setup\n";
  out << "digest " << Hex(r.digest) << "  (" << r.mode;
  if (r.mode == "partitioned" || r.mode == "per-device")
    out << ", " << r.partitions << " processes";
  out << ")\n";
}

std::vector<std::string> WriteOutputs(const scenario::Scenario& s, const fabric::RunResult& r,
                                      const std::string& dir, std::ostream& log) {
  namespace fs = std::filesystem;
  std::vector<std::string> written;
  fs::create_directories(dir);
  const FlowTable& ft = r.flows;
  int bins = s.bins();
  // Flows with a throttling level recorded (verbs QPs under a mechanism that keeps one).
  std::vector<size_t> throttled;
  for (size_t i = 0; i < ft.flows.size(); ++i)
    if (ft.flows[i].throttle_samples.total() > 0) throttled.push_back(i);

  std::string flows_csv = (fs::path(dir) / "flows.csv").string();
  {
    AtomicFile file(flows_csv);
    std::ostream& f = file.out();
    f << "time_ms";
    for (const auto& n : ft.names) f << "," << n << "_rx_gbps";
    for (const auto& n : ft.names) f << "," << n << "_tx_gbps";
    for (size_t i : throttled) f << "," << ft.names[i] << "_ccti";
    f << "\n";
    for (int b = 0; b < bins; ++b) {
      SimTime len = std::min(s.interval, s.duration - b * s.interval);
      f << static_cast<double>(b * s.interval + len) / 1e9;
      for (const auto& fl : ft.flows) f << "," << Gbps(fl.rx_payload.at(b), len);
      for (const auto& fl : ft.flows) f << "," << Gbps(fl.tx_payload.at(b), len);
      // The mean level of the packets sent in the interval; NaN (a gap in a plot) if none was.
      for (size_t i : throttled) {
        int64_t n = ft.flows[i].throttle_samples.at(b);
        f << ",";
        if (n)
          f << static_cast<double>(ft.flows[i].throttle_sum.at(b)) / static_cast<double>(n);
        else
          f << "NaN";
      }
      f << "\n";
    }
    file.Commit();
  }
  written.push_back(flows_csv);

  // Latency over time: per interval, the mean and largest latency of the packets delivered in it
  // (creation at the source to delivery; NaN, a gap in a plot, if none was).
  std::string latency_csv = (fs::path(dir) / "flow_latency.csv").string();
  {
    AtomicFile file(latency_csv);
    std::ostream& f = file.out();
    f << "time_ms";
    for (const auto& n : ft.names) f << "," << n << "_lat_mean_us," << n << "_lat_max_us";
    f << "\n";
    for (int b = 0; b < bins; ++b) {
      SimTime len = std::min(s.interval, s.duration - b * s.interval);
      f << static_cast<double>(b * s.interval + len) / 1e9;
      for (const auto& fl : ft.flows) {
        int64_t n = fl.rx_count.at(b);
        if (n == 0) {
          f << ",NaN,NaN";
          continue;
        }
        f << "," << static_cast<double>(fl.latency_sum.at(b)) / static_cast<double>(n) / 1e6 << ","
          << static_cast<double>(fl.latency_max.at(b)) / 1e6;
      }
      f << "\n";
    }
    file.Commit();
  }
  written.push_back(latency_csv);

  std::string ports_csv = (fs::path(dir) / "ports.csv").string();
  nlohmann::json ports = nlohmann::json::array();
  {
    AtomicFile file(ports_csv);
    std::ostream& f = file.out();
    f << "device,port,vl,peer,mean_occupancy_blocks,high_water_blocks,credit_stalled_fraction,"
         "tx_gbps,tx_packets,tx_fc_packets,credit_violations,dropped,tx_fecn,tx_becn\n";
    for (const fabric::PortSummary& p : r.ports) {
      double gbps = Gbps(static_cast<int64_t>(p.tx_bytes), s.duration);
      f << p.device << "," << p.port << "," << p.vl << "," << p.peer << ","
        << p.mean_occupancy_blocks << "," << p.high_water_blocks << "," << p.credit_stalled_fraction
        << "," << gbps << "," << p.tx_packets << "," << p.tx_fc_packets << ","
        << p.credit_violations << "," << p.dropped << "," << p.tx_fecn << "," << p.tx_becn << "\n";
      ports.push_back({{"device", p.device},
                       {"port", p.port},
                       {"vl", p.vl},
                       {"peer", p.peer},
                       {"mean_occupancy_blocks", p.mean_occupancy_blocks},
                       {"high_water_blocks", p.high_water_blocks},
                       {"credit_stalled_fraction", p.credit_stalled_fraction},
                       {"tx_gbps", gbps},
                       {"credit_violations", p.credit_violations},
                       {"tx_fecn", p.tx_fecn},
                       {"tx_becn", p.tx_becn}});
    }
    file.Commit();
  }
  written.push_back(ports_csv);

  // Buffer occupancy and credit stalls over time, one row per interval, port and VL (long format,
  // so a plot or a pandas pivot picks the ports it wants).
  std::string series_csv = (fs::path(dir) / "ports_series.csv").string();
  {
    AtomicFile file(series_csv);
    std::ostream& f = file.out();
    f << "time_ms,device,port,vl,occupancy_blocks,credit_stalled_fraction\n";
    for (int b = 0; b < bins; ++b) {
      double t = static_cast<double>(std::min(s.duration, (b + 1) * s.interval)) / 1e9;
      for (const fabric::PortSummary& p : r.ports) {
        if (static_cast<size_t>(b) >= p.occupancy_series.size()) continue;
        f << t << "," << p.device << "," << p.port << "," << p.vl << "," << p.occupancy_series[b]
          << "," << p.stalled_series[b] << "\n";
      }
    }
    file.Commit();
  }
  written.push_back(series_csv);

  std::string summary = (fs::path(dir) / "summary.json").string();
  {
    nlohmann::json j;
    j["scenario"] = s.name;
    j["file"] = s.file;
    j["seed"] = s.seed;
    j["duration_ms"] = static_cast<double>(s.duration) / 1e9;
    j["digest"] = Hex(r.digest);
    j["mode"] = r.mode;
    j["partitions"] = r.partitions;
    j["events"] = r.events;
    j["packet_hops"] = r.packet_hops;
    j["wall_seconds"] = r.wall_seconds;
    j["peak_rss_kb"] = r.peak_rss_kb;
    j["flows"] = nlohmann::json::array();
    for (const auto& f : Summarize(s, r))
      j["flows"].push_back({{"name", f.name},
                            {"rx_gbps", f.rx_gbps},
                            {"tx_gbps", f.tx_gbps},
                            {"latency_p50_us", f.p50_us},
                            {"latency_p99_us", f.p99_us},
                            {"latency_max_us", f.max_us},
                            {"latency_mean_us", f.mean_us},
                            {"rx_packets", f.rx_packets},
                            {"rx_fecn", f.rx_fecn}});
    j["traces"] = nlohmann::json::array();
    for (size_t i = 0; i < s.flows.size() && i < ft.flows.size(); ++i) {
      const auto& fi = s.flows[i];
      if (fi.trace_ranks == 0) continue;
      const FlowStats& f = ft.flows[i];
      bool done = f.ranks_done == fi.trace_ranks;
      j["traces"].push_back(
          {{"name", fi.name},
           {"file", fi.trace_file},
           {"ranks", fi.trace_ranks},
           {"ranks_done", f.ranks_done},
           {"execution_us",
            done ? nlohmann::json(static_cast<double>(f.finish - fi.start) / 1e6) : nullptr}});
    }
    j["ports"] = ports;
    AtomicFile file(summary);
    file.out() << j.dump(2) << "\n";
    file.Commit();
  }
  written.push_back(summary);

  // One PNG per figure, drawn by gnuplot from flows.csv: `columns` are (CSV column, title).
  auto plot = [&](const std::string& stem, const std::string& title, const std::string& ylabel,
                  const std::vector<std::pair<size_t, std::string>>& columns) {
    std::string gp = (fs::path(dir) / (stem + ".gp")).string();
    std::string png = (fs::path(dir) / (stem + ".png")).string();
    AtomicFile png_file(png);
    {
      AtomicFile gp_file(gp);
      std::ostream& g = gp_file.out();
      g << "set terminal pngcairo size 1000,560 noenhanced\n"
        << "set output '" << png_file.temp_path() << "'\n"
        << "set datafile separator ','\n"
        << "set title '" << title << ": " << s.name << "'\n"
        << "set xlabel 'virtual time (ms)'\nset ylabel '" << ylabel << "'\n"
        << "set key outside right\nset grid\nset xrange [0:*]\nset yrange [0:*]\n"
        << "plot ";
      // A fabric that was up gives one interval, its whole run: a point per flow, not a line.
      const char* style = bins > 1 ? "lines lw 2" : "points pt 7 ps 2";
      for (size_t i = 0; i < columns.size(); ++i)
        g << (i ? ", " : "") << "'" << flows_csv << "' using 1:" << columns[i].first << " with "
          << style << " title '" << columns[i].second << "'";
      g << "\n";
      gp_file.Commit();
    }
    written.push_back(gp);
    std::string cmd = "gnuplot '" + gp + "' 2>&1";
    if (std::system(cmd.c_str()) == 0 && png_file.CommitWrittenByOther())
      written.push_back(png);
    else
      log << "warning: gnuplot could not draw " << png << " (install gnuplot-nox)\n";
  };
  if (s.plot && !ft.names.empty()) {
    std::vector<std::pair<size_t, std::string>> rx;
    // A QP that sent nothing (the passive side of a one-sided test) is in the table, not the plot.
    for (size_t i = 0; i < ft.names.size(); ++i)
      if (i >= ft.paths.size() || ft.paths[i].empty() || ft.flows[i].tx_packets > 0)
        rx.push_back({i + 2, ft.names[i]});
    plot("throughput", "Per-flow throughput", "payload delivered (Gbit/s)", rx);
    // The CCTI columns follow the flows' rx and tx columns.
    std::vector<std::pair<size_t, std::string>> levels;
    for (size_t k = 0; k < throttled.size(); ++k)
      levels.push_back({2 + 2 * ft.names.size() + k, ft.names[throttled[k]]});
    if (!levels.empty()) plot("ccti", "Mean CCTI of the packets each QP sent", "CCTI", levels);
  }
  return written;
}

}  // namespace ibemu::results
