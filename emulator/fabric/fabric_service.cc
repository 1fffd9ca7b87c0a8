#include "emulator/fabric/fabric_service.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "common/transport/run_dir.h"
#include "control.pb.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "emulator/fabric/fabric_instance.h"
#include "emulator/fabric/runner.h"
#include "emulator/fabric/service_poller.h"
#include "emulator/fabric/umad_service.h"
#include "emulator/results/report.h"

namespace ibemu::fabric {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kServiceProtocol = 0x49424555;  // ServiceRequest.protocol
constexpr auto kSpinAfterMad = std::chrono::microseconds(200);
// How long a tool that had several MADs in flight at once counts as one that keeps its own
// threads busy (below).
constexpr auto kConcurrentFor = std::chrono::milliseconds(100);
constexpr auto kShortestSleep = std::chrono::microseconds(20);
// The longest an idle fabric sleeps: what else the loop does on its own (a listening socket
// paused after running out of descriptors, local_channel.cc) waits at most this long.
constexpr auto kIdleWait = std::chrono::milliseconds(100);
// After a turn that took in one or two MADs (a tool with few in flight, as for kSpinAfterMad) the
// engine may run this far (virtual time) past where it is, up to four times that past the wall
// clock's target, so that the answers leave in the same turn instead of after the loop has waited
// for the wall clock to reach their virtual time (an SMP's round trip across the 648-node fat
// tree is about 7 us). ibnetdiscover, with two SMPs in flight, took 6-9 % less time (medians of
// 15 runs, three times, 2026-11-28). For OpenSM, with four in flight, the lead made the sweep
// about 7 % slower (8 alternating pairs) and used more of the fabric's CPU, so it has none.
constexpr link::SimTime kMadLead = 20 * link::kPsPerUs;
// The latest virtual time a paced fabric is asked to reach: 2^62 ps, about 53 days of virtual
// time (4.6 wall seconds at the highest pace, 1e6), far from where adding a lead or a step to it
// could overflow.
constexpr double kMaxPacedTime = 4611686018427387904.0;
std::atomic<bool> g_stop{false};

void OnSignal(int) {
  g_stop = true;
}

// The run directory, checked; throws with a message naming it when it cannot be used.
transport::RunDir UsableRunDir(const std::string& name, bool create) {
  if (std::string e = transport::CheckFabricName(name); !e.empty())
    throw std::invalid_argument("--name: " + e);
  transport::RunDir rd = transport::ResolveRunDir();
  std::string e = create ? transport::PrepareRunDir(rd) : transport::CheckRunDir(rd);
  if (!e.empty()) throw std::runtime_error(e);
  return rd;
}

std::string UpHint(const std::string& name) {
  return "start one with `ibemu up <topology or scenario>" +
         (name == "default" ? std::string() : " --name " + name) + "`";
}

// Why fabric `name` cannot be asked anything, or "" when it is live.
std::string NotLive(const transport::RunDir& rd, const std::string& name, const FabricProbe& p) {
  if (p.state == FabricProbe::State::kAbsent)
    return "no fabric named '" + name + "' is up in " + rd.path + "; " + UpHint(name);
  if (p.state == FabricProbe::State::kDead) {
    int pid = p.info.is_object() ? p.info.value("pid", 0) : 0;
    return "fabric '" + name + "' is not running: its process" +
           (pid ? " (pid " + std::to_string(pid) + ")" : std::string()) +
           " ended without going down; `ibemu up` or `ibemu down` removes what it left in " +
           rd.path;
  }
  return "";
}

bool Request(const std::string& name, control::ServiceRequest req, double timeout_s,
             control::ServiceReply* reply, std::string* err) {
  req.set_protocol(kServiceProtocol);
  transport::RunDir rd = UsableRunDir(name, false);
  FabricProbe probe = ProbeFabric(rd, name);
  if (std::string why = NotLive(rd, name, probe); !why.empty()) {
    *err = why;
    return false;
  }
  std::string endpoint = transport::IpcEndpoint(transport::FilesOf(rd.path, name).service, err);
  if (endpoint.empty()) return false;
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::req);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, static_cast<int>(timeout_s * 1000));
  s.connect(endpoint);
  std::string b = req.SerializeAsString();
  s.send(zmq::buffer(b), zmq::send_flags::none);
  zmq::message_t m;
  if (!s.recv(m)) {
    *err = "fabric '" + name + "' did not answer within " + std::to_string(timeout_s) + " s" +
           (probe.info.is_null() ? " (it is still starting)" : "");
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
  std::printf("virtual time %.6f s after %.3f s of wall time; pace %s", r.virtual_time_ps() / 1e12,
              r.wall_seconds(),
              r.pace() > 0 ? (std::to_string(r.pace()) + " virtual s per wall s").c_str()
                           : "as fast as possible");
  if (r.lag_seconds() > 0) std::printf(" (behind by %.3f s of wall time)", r.lag_seconds());
  std::printf("\nevents %llu; results go to %s\n", static_cast<unsigned long long>(r.events()),
              r.results_dir().c_str());
  std::printf("pid %u; umad attachments %u\n", r.pid(), r.umad_attachments());
}

}  // namespace

int Up(scenario::Scenario s, const UpOptions& o) {
  // From the start: a SIGTERM while the fabric is being built still ends in results and no
  // files left behind.
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  transport::RunDir rd = UsableRunDir(o.name, true);
  std::string err, note;
  std::unique_ptr<FabricInstance> inst = FabricInstance::Claim(rd, o.name, &err, &note);
  if (!inst) {
    std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
    return 2;
  }
  if (!note.empty()) std::fprintf(stderr, "ibemu: %s\n", note.c_str());
  const transport::FabricFiles& files = inst->files();
  std::string service_ep = transport::IpcEndpoint(files.service, &err);
  std::string umad_ep = service_ep.empty() ? "" : transport::IpcEndpoint(files.umad, &err);
  if (umad_ep.empty()) throw std::runtime_error(err);
  // Results of a long-lived fabric: the virtual time of its first hour of wall time at the pace
  // (an hour of virtual time unpaced or faster than real time), in the scenario's intervals but
  // at most 3600 of them (the fabric runs on after that; the series stop). So a fabric paced at
  // 0.001 for a verbs experiment has 1 ms bins, and one at pace 1, one-second bins.
  double span_s = o.pace > 0 && o.pace < 1 ? 3600 * o.pace : 3600;
  s.duration = static_cast<link::SimTime>(span_s * 1e12);
  s.interval = std::max<link::SimTime>(s.interval, s.duration / 3600);
  s.measure_from = 0;
  s.measure_to = s.duration;
  std::string dir = o.results_dir.empty() ? "results/" + o.name + "-up" : o.results_dir;

  if (!s.pcap.empty() && !o.quiet)
    std::fprintf(stderr, "ibemu: warning: ibemu up does not capture; output.pcap is ignored\n");
  std::unique_ptr<Fabric> f = BuildFabric(s);
  engine::Partition part(NumLps(s));
  for (engine::LogicalProcess* lp : f->Lps()) part.Add(lp);

  // The sockets go before the results are written (and the instance, declared first, after
  // them), so that `ibemu down` returning means the files are gone and the results are there.
  auto ctx = std::make_unique<zmq::context_t>();
  // A ROUTER rather than a REP: a REP whose reply cannot be sent is stuck wanting to send, and
  // a client that floods requests without reading replies could wedge the service that way. The
  // ROUTER drops what it cannot deliver; REQ clients see no difference.
  auto rep = std::make_unique<zmq::socket_t>(*ctx, zmq::socket_type::router);
  rep->set(zmq::sockopt::linger, 0);
  // Nothing a client legitimately sends comes near this; a peer that sends more is disconnected
  // by ZeroMQ before its message is buffered.
  rep->set(zmq::sockopt::maxmsgsize, int64_t{64} << 10);
  rep->bind(service_ep);
  FabricInstance::MakePrivate(files.service);
  if (std::string e; transport::IpcEndpoint(files.direct, &e).empty()) throw std::runtime_error(e);
  auto umad = std::make_unique<UmadService>(*ctx, umad_ep, files.direct, *f, s, part);
  FabricInstance::MakePrivate(files.umad);
  FabricInstance::MakePrivate(files.direct);
  inst->WriteState({{"name", o.name},
                    {"pid", getpid()},
                    {"run_dir", rd.path},
                    {"endpoint", service_ep},
                    {"umad_endpoint", umad_ep},
                    {"scenario", s.file},
                    {"pace", o.pace},
                    {"results_dir", dir}});
  if (!o.quiet)
    std::fprintf(stderr,
                 "ibemu: fabric '%s' is up: %zu nodes, %zu cables; pace %s; service %s\n"
                 "ibemu: stop it with `ibemu down%s` or Ctrl-C\n",
                 o.name.c_str(), s.topo.nodes.size(), s.topo.cables.size(),
                 o.pace > 0 ? std::to_string(o.pace).c_str() : "as fast as possible",
                 service_ep.c_str(), o.name == "default" ? "" : (" --name " + o.name).c_str());

  part.StartAll();
  auto t0 = Clock::now();
  auto wall = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  double lag = 0;
  uint64_t link_seq = 0;
  std::string stop_reason = "signal";
  std::vector<zmq::pollitem_t> items;
  ServicePoller poller({rep.get(), &umad->socket()});
  // SIGINT and SIGTERM arrive only while the loop waits: one that came just after the loop
  // looked at g_stop would otherwise be noticed only at the next wake-up, which an idle fabric
  // puts far off. Blocked here, not earlier: a signal while the fabric is built still stops it.
  sigset_t stop_signals, wait_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, &wait_mask);
  sigdelset(&wait_mask, SIGINT);
  sigdelset(&wait_mask, SIGTERM);
  poller.set_wait_sigmask(&wait_mask);
  // Sleeps end within 10 us of their time rather than the default 50.
  prctl(PR_SET_TIMERSLACK, 10000UL, 0, 0, 0);
  auto next_sweep = Clock::now();
  auto spin_until = Clock::now();
  auto concurrent_until = Clock::now();
  SimTime lead_to = 0;  // kMadLead: the virtual time up to which the engine may run ahead
  // kMadLead is wall time at pace 1; below pace 1 it shrinks with the pace, so that a slowed
  // fabric (pace 0.001 for a verbs program) is never more than 80 us of wall time early.
  const SimTime lead = static_cast<SimTime>(static_cast<double>(kMadLead) * std::min(o.pace, 1.0));
  auto slice_ms = std::chrono::milliseconds(std::max<int64_t>(1, o.slice / link::kPsPerMs));
  while (!g_stop) {
    // Sleep until the next event is due in wall time (at most a slice) or a request comes.
    // Requests are taken between steps and act at the virtual time reached, which is where the
    // wall clock is (paced), so a MAD's round trip costs its virtual time, not a slice.
    std::chrono::microseconds wait(0);
    // Nothing scheduled: the engine has nothing to do until a request comes.
    bool idle = false;
    if (o.pace > 0 && Clock::now() < spin_until) {
      sched_yield();  // looking, but a thread of the tool (OpenSM has several) goes first
    } else if (o.pace > 0) {
      SimTime next = part.NextEventTime();
      // Events past kMaxPacedTime never run: waiting for them is waiting for nothing.
      idle = next == INT64_MAX || static_cast<double>(next) >= kMaxPacedTime;
      double due = idle ? 1e9 : static_cast<double>(next) / 1e12 / o.pace;
      double us = (due - wall()) * 1e6;
      // An idle fabric sleeps until a request, the next sweep of departed clients or kIdleWait:
      // woken every slice only to move the clock, it took a thousand wake-ups and 2 % of a core
      // a second on this host, for nothing.
      auto cap =
          idle ? std::clamp(std::chrono::duration_cast<std::chrono::microseconds>(next_sweep -
                                                                                  Clock::now()),
                            std::chrono::microseconds(0), std::chrono::microseconds(kIdleWait))
               : std::chrono::microseconds(slice_ms);
      // A sleep ends some microseconds late (the timer slack), so the shortest waits are not
      // slept but looked through.
      if (us >= kShortestSleep.count())
        wait = std::min<std::chrono::microseconds>(
            cap, std::chrono::microseconds(static_cast<int64_t>(us)));
    }
    items.clear();
    umad->AddPollItems(&items);
    if (umad->TakeZmqUsed()) poller.Touched(1);  // replies and completions went out on it
    const auto slept_from = Clock::now();
    std::vector<bool> ready = poller.Wait(wait, &items);
    if (idle) {
      // The clock moves to where the slices slept through would have left it (each moved it to
      // the wall's time and nothing else), so a request that ends the sleep acts at the virtual
      // time it did when the loop woke every slice: at most a slice behind the wall.
      auto ticks = (Clock::now() - slept_from) / slice_ms;
      double at = std::chrono::duration<double>(slept_from + ticks * slice_ms - t0).count();
      part.RunUntil(static_cast<link::SimTime>(std::min(at * o.pace * 1e12, kMaxPacedTime)));
    }
    if (ready[1] || std::any_of(items.begin(), items.end(),
                                [](const zmq::pollitem_t& i) { return i.revents != 0; })) {
      uint64_t before = umad->mads_in();
      umad->Poll(ready[1], items.data());
      // A tool that sent a MAD sends its next one as soon as the answer is in: the loop keeps
      // looking for a little while instead of sleeping, and the MAD does not wait for the
      // service to wake up (each wake-up costs as much as the MAD itself).
      //
      // Only for tools with one or two MADs in flight (ibnetdiscover keeps two, smpquery one):
      // a turn of the loop takes in one or two. A tool with more (OpenSM keeps four, from
      // several threads; a third of its turns take in three or four) has its next MAD coming
      // anyway, and on two cores the looking took the core its threads needed: OpenSM to SUBNET
      // UP took 1.1-1.2 times ibsim's with the spin, 0.99 without; ibnetdiscover 0.8 with it,
      // 1.0 without.
      uint64_t got = umad->mads_in() - before;
      auto t = Clock::now();
      if (got > 2) concurrent_until = t + kConcurrentFor;
      if (got > 0 && t >= concurrent_until) {
        spin_until = t + kSpinAfterMad;
        lead_to = part.now() + lead;
      }
    }
    if (Clock::now() >= next_sweep) {
      umad->ForgetDeparted();
      next_sweep = Clock::now() + std::chrono::milliseconds(500);
    }
    std::vector<zmq::message_t> frames;
    if (ready[0]) poller.Touched(0);  // received on, and answered on, below
    while (ready[0] && !g_stop &&
           zmq::recv_multipart(*rep, std::back_inserter(frames), zmq::recv_flags::dontwait)) {
      // [routing id, ..., empty delimiter, request]; anything else is not a REQ's and is dropped.
      auto delim = std::find_if(frames.begin(), frames.end(),
                                [](const zmq::message_t& f) { return f.size() == 0; });
      if (delim == frames.end() || delim + 2 != frames.end()) {
        frames.clear();
        continue;
      }
      const zmq::message_t& m = frames.back();
      {
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
        reply.set_umad_attachments(static_cast<uint32_t>(umad->attached_clients()));
        reply.set_pid(static_cast<uint32_t>(getpid()));
        if (!req.ParseFromArray(m.data(), static_cast<int>(m.size())) ||
            req.protocol() != kServiceProtocol) {
          reply.set_ok(false);
          reply.set_error("not an ibemu service request");
        } else {
          reply.set_ok(true);
          if (req.has_status() && req.status().list_cas()) {
            for (const auto& node : s.topo.nodes)
              if (node.type == topology::NodeType::kCa) reply.add_cas(node.name);
          }
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
              e.kind = mgmt::ManagedNode::kLinkCommand;
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
        // A client that asked and left, or does not read its replies, is not waited for.
        frames.back().rebuild(b.data(), b.size());
        (void)zmq::send_multipart(*rep, frames, zmq::send_flags::dontwait);
        frames.clear();
      }
    }
    if (g_stop) break;
    link::SimTime target;
    if (o.pace > 0) {
      double w = wall();
      // In double first: at a pace of 1e6 the picoseconds pass 2^63 after nine wall seconds,
      // where the cast would be undefined. Capped there, the fabric stops advancing.
      target = static_cast<link::SimTime>(std::min(w * o.pace * 1e12, kMaxPacedTime));
      target = std::max(target, std::min(lead_to, target + 4 * lead));
    } else {
      target = part.now() + 10 * link::kPsPerMs;
    }
    // In steps of 1 us of virtual time, and for at most a slice of wall time before looking at
    // the sockets again: a fabric behind its pace (or running as fast as it can) would otherwise
    // run to the target in one go and leave its clients unanswered for as long as that takes.
    // The steps do not change the order of events. A step with nothing in it ends at the next
    // event (stepping an idle fabric 1 us at a time kept it from keeping up with a fast pace,
    // and a MAD's round trip waited for the steps).
    auto budget = Clock::now() + slice_ms;
    while (part.now() < target && Clock::now() < budget) {
      SimTime next = part.NextEventTime();
      SimTime step = next == INT64_MAX ? target : std::max(part.now() + link::kPsPerUs, next + 1);
      part.RunUntil(std::min(target, step));
    }
    umad->FlushCompletions();
    umad->ForgetFailed();
    if (o.pace > 0) {
      double behind = wall() - static_cast<double>(part.now()) / 1e12 / o.pace;
      lag = behind > 2.0 * static_cast<double>(o.slice) / 1e12 ? behind : 0;
    }
  }
  pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);
  link::SimTime end = std::max<link::SimTime>(part.now(), 1);
  s.duration = std::min(s.duration, end);
  s.measure_to = s.duration;
  RunResult r;
  CollectResults(*f, s, part.events(), &r);
  r.wall_seconds = wall();
  r.mode = "up";
  // New clients see "no fabric" from here on; attached ones lose the connection, and their
  // libraries time their outstanding requests out.
  inst->RemoveState();
  umad.reset();
  rep.reset();
  ctx.reset();
  if (!o.quiet)
    std::fprintf(stderr, "ibemu: fabric '%s' going down (%s) at virtual time %.6f s\n",
                 o.name.c_str(), stop_reason.c_str(), static_cast<double>(end) / 1e12);
  s.plot = s.plot && !r.flows.names.empty();  // the scenario's flows and the verbs QPs'
  results::PrintTable(s, r, std::cout);
  results::WriteOutputs(s, r, dir, std::cerr);
  std::cout << "results in " << dir << "/\n";
  return 0;
}

int Down(const std::string& name, double timeout_s) {
  transport::RunDir rd = UsableRunDir(name, false);
  FabricProbe probe = ProbeFabric(rd, name);
  if (probe.state == FabricProbe::State::kDead) {
    // Taking the name is what makes removing its files safe: no instance can hold it meanwhile.
    std::string err, note;
    if (FabricInstance::Claim(rd, name, &err, &note)) {
      std::fprintf(stderr, "ibemu: fabric '%s' was not running; %s (no results were written)\n",
                   name.c_str(), note.c_str());
      return 0;
    }
    probe = ProbeFabric(rd, name);  // a new instance took the name first
  }
  int pid = probe.info.is_object() ? probe.info.value("pid", 0) : 0;
  int pidfd = WatchProcess(rd, name, pid);
  control::ServiceRequest req;
  req.mutable_down()->set_reason("ibemu down");
  control::ServiceReply reply;
  std::string err;
  if (!Request(name, req, timeout_s, &reply, &err)) {
    if (pidfd >= 0) close(pidfd);
    std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
    return 2;
  }
  // The instance lets go of its lock last, after its sockets are closed, its files removed and
  // its results written; the process ends right after. Then a new `up` of the name can start.
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  bool gone = WaitUntilGone(rd, name, pidfd, timeout);
  if (pidfd >= 0) close(pidfd);
  if (!gone) {
    std::fprintf(stderr,
                 "ibemu: error: fabric '%s' (pid %d) accepted down but is still running after "
                 "%g s\n",
                 name.c_str(), pid, timeout_s);
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

std::vector<std::string> ListCas(const std::string& name) {
  control::ServiceRequest req;
  req.mutable_status()->set_list_cas(true);
  control::ServiceReply reply;
  std::string err;
  if (!Request(name, req, 5.0, &reply, &err)) throw std::runtime_error(err);
  if (!reply.ok()) throw std::runtime_error("fabric '" + name + "': " + reply.error());
  // A fabric started by an ibemu from before list_cas ignores the field and lists nothing.
  if (reply.cas_size() == 0 && reply.nodes() > 0)
    throw std::runtime_error("fabric '" + name +
                             "' does not list its CAs (started by an older ibemu; restart it)");
  return {reply.cas().begin(), reply.cas().end()};
}

int Status(const std::string& name, double wait_seconds) {
  control::ServiceRequest req;
  req.mutable_status();
  control::ServiceReply reply;
  std::string err;
  auto until = Clock::now() + std::chrono::duration<double>(wait_seconds);
  // While waiting, each attempt is short so that a fabric that starts late is seen soon.
  while (!Request(name, req, wait_seconds > 0 ? 0.5 : 5.0, &reply, &err)) {
    if (Clock::now() >= until) {
      if (wait_seconds > 0)
        std::fprintf(stderr, "ibemu: error: %s (waited %g s)\n", err.c_str(), wait_seconds);
      else
        std::fprintf(stderr, "ibemu: error: %s\n", err.c_str());
      return 2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  PrintStatus(reply);
  return 0;
}

}  // namespace ibemu::fabric
