#include "emulator/fabric/fabric_service.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <zmq.hpp>

#include "control.pb.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "emulator/fabric/runner.h"
#include "emulator/fabric/umad_service.h"
#include "emulator/results/report.h"

namespace ibemu::fabric {
namespace {

using Clock = std::chrono::steady_clock;
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop = true;
}

std::string RunDir() {
  const char* d = std::getenv("IBEMU_RUN_DIR");
  return d && *d ? d : "/tmp";
}

bool ProcessAlive(int pid) {
  return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

bool Request(const std::string& name, const control::ServiceRequest& req, double timeout_s,
             control::ServiceReply* reply, std::string* err) {
  if (!std::filesystem::exists(StateFile(name))) {
    *err = "no fabric named '" + name + "' is up (no " + StateFile(name) + ")";
    return false;
  }
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::req);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout_s * 1000));
  s.connect(ServiceEndpoint(name));
  std::string b = req.SerializeAsString();
  s.send(zmq::buffer(b), zmq::send_flags::none);
  zmq::message_t m;
  if (!s.recv(m)) {
    *err = "fabric '" + name + "' did not answer within " + std::to_string(timeout_s) + " s";
    return false;
  }
  if (!reply->ParseFromArray(m.data(), static_cast<int>(m.size()))) {
    *err = "fabric '" + name + "' sent an unreadable reply";
    return false;
  }
  return true;
}

void PrintStatus(const control::ServiceReply& r) {
  std::printf("fabric %s: %u nodes from %s\n", r.name().c_str(), r.nodes(), r.scenario().c_str());
  std::printf("virtual time %.6f s after %.1f s of wall time; pace %s", r.virtual_time_ps() / 1e12,
              r.wall_seconds(),
              r.pace() > 0 ? (std::to_string(r.pace()) + " virtual s per wall s").c_str()
                           : "as fast as possible");
  if (r.lag_seconds() > 0) std::printf(" (behind by %.3f s of wall time)", r.lag_seconds());
  std::printf("\nevents %llu; results go to %s\n", static_cast<unsigned long long>(r.events()),
              r.results_dir().c_str());
}

}  // namespace

std::string ServiceEndpoint(const std::string& name) {
  return "ipc://" + RunDir() + "/ibemu-up-" + name + ".sock";
}
std::string UmadEndpoint(const std::string& name) {
  return "ipc://" + RunDir() + "/ibemu-up-" + name + "-umad.sock";
}
std::string StateFile(const std::string& name) {
  return RunDir() + "/ibemu-up-" + name + ".json";
}

int Up(scenario::Scenario s, const UpOptions& o) {
  std::string state = StateFile(o.name);
  if (std::filesystem::exists(state)) {
    nlohmann::json j;
    try {
      std::ifstream(state) >> j;
    } catch (...) {
    }
    int pid = j.value("pid", 0);
    if (ProcessAlive(pid)) {
      std::fprintf(stderr, "ibemu: error: a fabric named '%s' is already up (pid %d); use --name\n",
                   o.name.c_str(), pid);
      return 2;
    }
    std::filesystem::remove(state);  // left behind by a fabric that was killed
  }
  // Results of a long-lived fabric: one-second bins for the first hour of virtual time (the
  // fabric runs on after that; the series stop).
  s.interval = std::max<link::SimTime>(s.interval, link::kPsPerSec);
  s.duration = 3600 * link::kPsPerSec;
  s.measure_from = 0;
  s.measure_to = s.duration;
  std::string dir = o.results_dir.empty() ? "results/" + o.name + "-up" : o.results_dir;

  if (!s.pcap.empty() && !o.quiet)
    std::fprintf(stderr, "ibemu: warning: ibemu up does not capture; output.pcap is ignored\n");
  std::unique_ptr<Fabric> f = BuildFabric(s);
  engine::Partition part(f->devices.size());
  for (auto& d : f->devices) part.Add(d.get());

  zmq::context_t ctx;
  zmq::socket_t rep(ctx, zmq::socket_type::rep);
  rep.set(zmq::sockopt::linger, 0);
  rep.bind(ServiceEndpoint(o.name));
  UmadService umad(ctx, UmadEndpoint(o.name), *f, s, part);
  {
    nlohmann::json j{{"name", o.name},
                     {"pid", getpid()},
                     {"endpoint", ServiceEndpoint(o.name)},
                     {"umad_endpoint", UmadEndpoint(o.name)},
                     {"scenario", s.file},
                     {"pace", o.pace},
                     {"results_dir", dir}};
    std::ofstream(state) << j.dump(2) << "\n";
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (!o.quiet)
    std::fprintf(stderr,
                 "ibemu: fabric '%s' is up: %zu nodes, %zu cables; pace %s; service %s\n"
                 "ibemu: stop it with `ibemu down%s` or Ctrl-C\n",
                 o.name.c_str(), s.topo.nodes.size(), s.topo.cables.size(),
                 o.pace > 0 ? std::to_string(o.pace).c_str() : "as fast as possible",
                 ServiceEndpoint(o.name).c_str(),
                 o.name == "default" ? "" : (" --name " + o.name).c_str());

  part.StartAll();
  auto t0 = Clock::now();
  auto wall = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  double lag = 0;
  uint64_t link_seq = 0;
  std::string stop_reason = "signal";
  zmq::pollitem_t items[2] = {{rep.handle(), 0, ZMQ_POLLIN, 0},
                              {umad.socket().handle(), 0, ZMQ_POLLIN, 0}};
  auto slice_ms = std::chrono::milliseconds(std::max<int64_t>(1, o.slice / link::kPsPerMs));
  while (!g_stop) {
    // Sleep until the next event is due in wall time (at most a slice) or a request comes.
    // Requests are taken between steps and act at the virtual time reached, which is where the
    // wall clock is (paced), so a MAD's round trip costs its virtual time, not a slice.
    std::chrono::milliseconds wait(0);
    if (o.pace > 0) {
      SimTime next = part.NextEventTime();
      double due = next == INT64_MAX ? 1e9 : static_cast<double>(next) / 1e12 / o.pace;
      double ms = (due - wall()) * 1e3;
      wait = ms >= 1 ? std::min(slice_ms, std::chrono::milliseconds(static_cast<int64_t>(ms)))
                     : std::chrono::milliseconds(0);
    }
    try {
      zmq::poll(items, 2, wait);
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
      continue;  // a signal: g_stop is set and the loop ends
    }
    if (items[1].revents & ZMQ_POLLIN) umad.Poll();
    if (items[0].revents & ZMQ_POLLIN) {
      zmq::message_t m;
      if (rep.recv(m, zmq::recv_flags::dontwait)) {
        control::ServiceRequest req;
        control::ServiceReply reply;
        reply.set_name(o.name);
        reply.set_virtual_time_ps(part.now());
        reply.set_wall_seconds(wall());
        reply.set_pace(o.pace);
        reply.set_lag_seconds(lag);
        reply.set_events(part.events());
        reply.set_nodes(static_cast<uint32_t>(s.topo.nodes.size()));
        reply.set_scenario(s.file);
        reply.set_results_dir(dir);
        if (!req.ParseFromArray(m.data(), static_cast<int>(m.size()))) {
          reply.set_ok(false);
          reply.set_error("unreadable request");
        } else {
          reply.set_ok(true);
          if (req.has_down()) {
            g_stop = true;
            stop_reason = "ibemu down";
          }
          if (req.has_link()) {
            const control::LinkRequest& l = req.link();
            int n = s.topo.FindNode(l.node());
            if (n < 0 || l.port() < 1 || static_cast<int>(l.port()) > s.topo.nodes[n].num_ports) {
              reply.set_ok(false);
              reply.set_error(n < 0 ? "no node '" + l.node() + "'"
                                    : "node '" + l.node() + "' has no port " +
                                          std::to_string(l.port()));
            } else {
              engine::Event e;
              e.time = part.now();
              e.lp = static_cast<engine::LpId>(n);
              e.src = 0xFFFFFFFDu;  // the service, after every device
              e.seq = link_seq++;
              e.kind = Device::kLinkCommand;
              e.port = static_cast<uint16_t>(l.port());
              e.a = l.up() ? 1 : 0;
              part.Schedule(e);
              if (!o.quiet)
                std::fprintf(stderr, "ibemu: link %s:%u %s at virtual time %.6f s\n",
                             l.node().c_str(), l.port(), l.up() ? "enabled" : "disabled",
                             static_cast<double>(part.now()) / 1e12);
            }
          }
        }
        std::string b = reply.SerializeAsString();
        rep.send(zmq::buffer(b), zmq::send_flags::none);
      }
    }
    if (g_stop) break;
    link::SimTime target;
    if (o.pace > 0) {
      double w = wall();
      target = static_cast<link::SimTime>(w * o.pace * 1e12);
    } else {
      target = part.now() + 10 * link::kPsPerMs;
    }
    part.RunUntil(target);
    if (o.pace > 0) {
      double behind = wall() - static_cast<double>(part.now()) / 1e12 / o.pace;
      lag = behind > 2.0 * static_cast<double>(o.slice) / 1e12 ? behind : 0;
    }
  }
  link::SimTime end = std::max<link::SimTime>(part.now(), 1);
  s.duration = std::min(s.duration, end);
  s.measure_to = s.duration;
  RunResult r;
  CollectResults(*f, s, part.events(), &r);
  r.wall_seconds = wall();
  r.mode = "up";
  std::filesystem::remove(state);
  if (!o.quiet)
    std::fprintf(stderr, "ibemu: fabric '%s' going down (%s) at virtual time %.6f s\n",
                 o.name.c_str(), stop_reason.c_str(), static_cast<double>(end) / 1e12);
  s.plot = s.plot && !s.flows.empty();
  results::PrintTable(s, r, std::cout);
  results::WriteOutputs(s, r, dir, std::cerr);
  std::cout << "results in " << dir << "/\n";
  return 0;
}

int Down(const std::string& name, double timeout_s) {
  control::ServiceRequest req;
  req.mutable_down()->set_reason("ibemu down");
  control::ServiceReply reply;
  std::string err;
  if (!Request(name, req, timeout_s, &reply, &err)) {
    std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
    return 2;
  }
  // The fabric writes its results, then removes its state file.
  auto until = Clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::filesystem::exists(StateFile(name)) && Clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (std::filesystem::exists(StateFile(name))) {
    std::fprintf(stderr,
                 "ibemu: error: fabric '%s' accepted down but has not finished after %g s\n",
                 name.c_str(), timeout_s);
    return 2;
  }
  std::printf("fabric %s down at virtual time %.6f s; results in %s/\n", name.c_str(),
              reply.virtual_time_ps() / 1e12, reply.results_dir().c_str());
  return 0;
}

int Link(const std::string& name, const std::string& node, int port, bool up) {
  control::ServiceRequest req;
  control::LinkRequest* l = req.mutable_link();
  l->set_node(node);
  l->set_port(static_cast<uint32_t>(port));
  l->set_up(up);
  control::ServiceReply reply;
  std::string err;
  if (!Request(name, req, 5.0, &reply, &err)) {
    std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
    return 2;
  }
  if (!reply.ok()) {
    std::fprintf(stderr, "ibemu: error: %s\n", reply.error().c_str());
    return 2;
  }
  std::printf("link %s:%d %s at virtual time %.6f s\n", node.c_str(), port,
              up ? "enabled" : "disabled", reply.virtual_time_ps() / 1e12);
  return 0;
}

int Status(const std::string& name) {
  control::ServiceRequest req;
  req.mutable_status();
  control::ServiceReply reply;
  std::string err;
  if (!Request(name, req, 5.0, &reply, &err)) {
    std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
    return 2;
  }
  PrintStatus(reply);
  return 0;
}

}  // namespace ibemu::fabric
