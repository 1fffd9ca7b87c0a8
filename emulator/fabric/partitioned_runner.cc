#include "emulator/fabric/partitioned_runner.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

#include "control.pb.h"
#include "emulator/engine/event_codec.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/shm_ring.h"
#include "emulator/fabric/sync.h"

namespace ibemu::fabric {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHeartbeatEvery = std::chrono::seconds(1);
// A process silent this long is treated as dead (covers hosts the launcher cannot waitpid).
constexpr auto kSilenceLimit = std::chrono::seconds(20);
// Each direction between two processes on one host. The file is sparse: its pages are touched as
// batches go round it, so a long run ends up using all of it. A batch is at most half of it.
constexpr size_t kRingBytes = size_t{16} << 20;
// How long a waiting process polls its rings before it sleeps on its doorbell: longer than a
// neighbour usually takes for a window, as waking a sleeper costs tens of microseconds.
constexpr auto kSpin = std::chrono::microseconds(500);
constexpr auto kYieldSpin = std::chrono::microseconds(200);
constexpr uint64_t kEventsBetweenNews = 32;

void SendProto(zmq::socket_t& s, const google::protobuf::Message& m) {
  std::string b = m.SerializeAsString();
  s.send(zmq::buffer(b), zmq::send_flags::none);
}

// Per ordered pair of partitions, the lookahead: the least time between an event in one and the
// earliest event it can cause in the other. Across a cable into node b that is the cable's latency
// plus the smaller of b's receive delay (data packets) and the FC latency (credits).
std::vector<std::vector<SimTime>> Lookahead(const scenario::Scenario& s,
                                            const std::vector<uint32_t>& part, uint32_t n) {
  std::vector<std::vector<SimTime>> la(n, std::vector<SimTime>(n, INT64_MAX));
  for (const topology::Cable& c : s.topo.cables) {
    uint32_t a = part[c.a.node], b = part[c.b.node];
    if (a == b) continue;
    SimTime l = CableLatency(s, c);
    la[a][b] = std::min(la[a][b], l + std::min(RxDelay(s, c.b.node), s.fc_latency));
    la[b][a] = std::min(la[b][a], l + std::min(RxDelay(s, c.a.node), s.fc_latency));
  }
  // The side band (the LP after the nodes) talks to every device, each message taking its
  // latency.
  if (part.size() > s.topo.nodes.size()) {
    SimTime sb = cc::MechanismRegistry::Get().Make(s.cc.mechanism, s.cc.params)->SideBandLatency();
    uint32_t q = part.back();
    for (uint32_t p = 0; p < n; ++p)
      if (p != q) {
        la[p][q] = std::min(la[p][q], sb);
        la[q][p] = std::min(la[q][p], sb);
      }
  }
  return la;
}

// What a partitioned run refuses, before anything starts.
void CheckPartitions(const scenario::Scenario& s, const std::vector<uint32_t>& part) {
  if (!s.pcap.empty())
    throw std::invalid_argument(
        "--pcap works with the embedded fabric only; run without --partitions/--per-device");
  if (s.subnet_manager == "external")
    throw std::invalid_argument(
        "fabric.subnet_manager external: a subnet manager attaches through `ibemu up`, which "
        "runs in one process; run without --partitions/--per-device");
  if (part.size() != NumLps(s))
    throw std::invalid_argument("the partition plan has " + std::to_string(part.size()) +
                                " logical processes; the scenario has " +
                                std::to_string(NumLps(s)));
  uint32_t n = *std::max_element(part.begin(), part.end()) + 1;
  // Conservative synchronisation needs every cable between processes to take some time.
  for (const auto& row : Lookahead(s, part, n))
    for (SimTime l : row)
      if (l <= 0)
        throw std::invalid_argument(
            "a cable between processes has zero latency; give cables a length "
            "(topology.cable_length_m) or fabric.phy_latency");
}

// A socket bound on every interface ("*") is reached by this host's name.
std::string Advertised(const std::string& bound, const std::string& bind_host) {
  const std::string any = "tcp://0.0.0.0:";
  if (bind_host != "*" || bound.rfind(any, 0) != 0) return bound;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return bound;
  return "tcp://" + std::string(host) + ":" + bound.substr(any.size());
}

std::string DescribeStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const char* n = strsignal(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + (n ? n : "?") + ")";
  }
  return "stopped";
}

// The devices a partition holds, for messages that name a failed process.
std::string Members(const scenario::Scenario& s, const std::vector<uint32_t>& part, uint32_t p) {
  std::string m;
  int shown = 0, total = 0;
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] != p) continue;
    if (shown < 6) m += (shown++ ? ", " : "") + s.topo.nodes[i].name;
    ++total;
  }
  if (total > shown) m += ", ... (" + std::to_string(total) + " devices)";
  return m;
}

class ZmqRemote : public engine::RemoteSink {
 public:
  ZmqRemote(const std::vector<uint32_t>& part, uint32_t self, uint32_t n)
      : part_(part), writers_(n) {
    for (auto& w : writers_) w.Reset(self);
    self_ = self;
  }
  void Send(const engine::Event& e) override { writers_[part_[e.lp]].Add(e); }
  engine::BatchWriter& writer(uint32_t p) { return writers_[p]; }

 private:
  const std::vector<uint32_t>& part_;
  std::vector<engine::BatchWriter> writers_;
  uint32_t self_ = 0;
};

scenario::Scenario LoadForWorker(const control::RunConfig& rc) {
  scenario::Scenario s = scenario::LoadScenario(rc.scenario_path());
  s.seed = rc.seed();
  s.duration = rc.duration_ps();
  s.measure_from = rc.measure_from_ps();
  s.measure_to = rc.measure_to_ps();
  s.plot = false;
  s.pcap.clear();
  return s;
}

void FillResult(const scenario::Scenario& s, const Fabric& f, const engine::Partition& part,
                uint32_t self, control::Result* r) {
  r->set_partition(self);
  for (const auto& d : f.devices) {
    if (!d) continue;
    auto* lp = r->add_lps();
    lp->set_lp(d->id());
    lp->set_digest(d->digest());
    lp->set_events(d->events_handled());
    for (int p = 1; p <= d->num_ports(); ++p)
      r->set_packet_hops(r->packet_hops() + d->port(p).stats.tx_packets);
  }
  if (f.side_band) {
    auto* lp = r->add_lps();
    lp->set_lp(f.side_band->id());
    lp->set_digest(f.side_band->digest());
    lp->set_events(f.side_band->events_handled());
  }
  for (size_t i = 0; i < f.flows.flows.size(); ++i) {
    const stats::FlowStats& fs = f.flows.flows[i];
    auto* fr = r->add_flows();
    fr->set_flow(static_cast<uint32_t>(i));
    for (int64_t v : fs.rx_payload.values()) fr->add_rx_bins(v);
    for (int64_t v : fs.tx_payload.values()) fr->add_tx_bins(v);
    for (uint64_t v : fs.latency.counts()) fr->add_latency_counts(v);
    fr->set_latency_n(fs.latency.count());
    fr->set_latency_sum(fs.latency.sum());
    fr->set_latency_max(fs.latency.max());
    fr->set_rx_packets(fs.rx_packets);
    fr->set_tx_packets(fs.tx_packets);
    fr->set_messages(fs.messages);
    for (int64_t v : fs.rx_count.values()) fr->add_rx_count_bins(v);
    for (int64_t v : fs.latency_sum.values()) fr->add_latency_sum_bins(v);
    for (int64_t v : fs.latency_max.values()) fr->add_latency_max_bins(v);
    fr->set_rx_fecn(fs.rx_fecn);
    fr->set_ranks_done(fs.ranks_done);
    fr->set_finish(fs.finish);
  }
  for (const PortSummary& ps : SummarizePorts(f, s)) {
    auto* pr = r->add_ports();
    pr->set_lp(static_cast<uint32_t>(s.topo.FindNode(ps.device)));
    pr->set_device(ps.device);
    pr->set_peer(ps.peer);
    pr->set_port(ps.port);
    pr->set_vl(ps.vl);
    pr->set_mean_occupancy_blocks(ps.mean_occupancy_blocks);
    pr->set_high_water_blocks(ps.high_water_blocks);
    pr->set_credit_stalled_fraction(ps.credit_stalled_fraction);
    pr->set_tx_bytes(ps.tx_bytes);
    pr->set_tx_packets(ps.tx_packets);
    pr->set_tx_fc_packets(ps.tx_fc_packets);
    pr->set_credit_violations(ps.credit_violations);
    pr->set_dropped(ps.dropped);
    pr->set_tx_fecn(ps.tx_fecn);
    pr->set_tx_becn(ps.tx_becn);
    for (float v : ps.occupancy_series) pr->add_occupancy_series(v);
    for (float v : ps.stalled_series) pr->add_stalled_series(v);
  }
  r->set_events(part.events());
  r->set_peak_rss_kb(PeakRssKb());
}

}  // namespace

std::vector<uint32_t> AssignPartitions(const topology::Topology& t, int n, bool per_device) {
  size_t lps = t.nodes.size();
  std::vector<uint32_t> part(lps, 0);
  if (per_device) {
    for (size_t i = 0; i < lps; ++i) part[i] = static_cast<uint32_t>(i);
    return part;
  }
  if (n <= 1) return part;
  if (static_cast<size_t>(n) > lps)
    throw std::invalid_argument("--partitions " + std::to_string(n) + ": the fabric has only " +
                                std::to_string(lps) + " devices");
  std::vector<int> sws = t.Switches();
  if (sws.size() >= static_cast<size_t>(n)) {
    // Switch groups (a switch and its CAs), dealt out in switch order to the lightest partition.
    std::vector<int> owner(lps, -1);
    std::vector<size_t> load(n, 0);
    for (int sw : sws) {
      std::vector<int> group{sw};
      for (int p = 1; p <= t.nodes[sw].num_ports; ++p) {
        topology::PortRef peer = t.Peer({sw, p});
        if (peer.valid() && t.nodes[peer.node].type == topology::NodeType::kCa &&
            owner[peer.node] < 0) {
          owner[peer.node] = sw;
          group.push_back(peer.node);
        }
      }
      size_t best = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
      for (int g : group) part[g] = static_cast<uint32_t>(best);
      load[best] += group.size();
      owner[sw] = sw;
    }
    for (size_t i = 0; i < lps; ++i)  // CAs not cabled to any switch
      if (owner[i] < 0) {
        size_t best =
            static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        part[i] = static_cast<uint32_t>(best);
        ++load[best];
      }
    return part;
  }
  for (size_t i = 0; i < lps; ++i) part[i] = static_cast<uint32_t>(i * n / lps);
  return part;
}

int RunWorker(const std::string& launcher, uint32_t self, const std::string& ipc_dir,
              const std::string& bind_host, bool watch_parent) {
  // A process the launcher started dies with it (PR_SET_PDEATHSIG); this catches the window
  // before that was set. A process started by hand has no launcher parent to watch.
  const pid_t parent = getppid();
  zmq::context_t ctx;
  zmq::socket_t ctl(ctx, zmq::socket_type::dealer);
  std::string id = "p" + std::to_string(self);
  ctl.set(zmq::sockopt::routing_id, id);
  ctl.set(zmq::sockopt::linger, 5000);
  ctl.connect(launcher);
  zmq::socket_t pull(ctx, zmq::socket_type::pull);
  pull.set(zmq::sockopt::rcvhwm, 0);
  std::string data_ep = ipc_dir.empty() ? "tcp://" + bind_host + ":*"
                                        : "ipc://" + ipc_dir + "/data-" + std::to_string(self);
  pull.bind(data_ep);
  data_ep = Advertised(pull.get(zmq::sockopt::last_endpoint), bind_host);

  auto fail = [&](const std::string& why) {
    control::ToLauncher m;
    m.mutable_error()->set_reason(why);
    SendProto(ctl, m);
    std::fprintf(stderr, "ibemu worker %u: %s\n", self, why.c_str());
    return 1;
  };

  control::ToLauncher hello;
  hello.mutable_hello()->set_partition(self);
  hello.mutable_hello()->set_data_endpoint(data_ep);
  hello.mutable_hello()->set_pid(getpid());
  SendProto(ctl, hello);

  zmq::message_t msg;
  if (!ctl.recv(msg)) return 1;
  control::ToProcess tp;
  if (!tp.ParseFromArray(msg.data(), static_cast<int>(msg.size())) || !tp.has_run())
    return fail("expected a run configuration from the launcher");
  const control::RunConfig& rc = tp.run();

  auto t_setup = Clock::now();
  double run_s = 0, wait_s = 0;
  int trace_rows = 0;
  try {
    scenario::Scenario s = LoadForWorker(rc);
    std::vector<uint32_t> part(rc.lp_partition().begin(), rc.lp_partition().end());
    uint32_t n = rc.num_partitions();
    if (part.size() != NumLps(s)) return fail("partition map does not fit the topology");
    std::vector<int> local;
    for (size_t i = 0; i < part.size(); ++i)
      if (part[i] == self) local.push_back(static_cast<int>(i));
    std::unique_ptr<Fabric> f = BuildFabric(s, local);
    engine::Partition eng(part.size());
    for (engine::LogicalProcess* lp : f->Lps()) eng.Add(lp);
    ZmqRemote remote(part, self, n);
    eng.SetRemote(&remote);

    auto la = Lookahead(s, part, n);
    Sync sync(la, self, s.duration);
    const bool trace = std::getenv("IBEMU_TRACE_SYNC") != nullptr;
    // Batches go through shared-memory rings on one host (ipc), through ZeroMQ across hosts.
    const bool shm = !ipc_dir.empty();
    std::map<uint32_t, zmq::socket_t> push;
    std::vector<ShmMapping> maps;
    std::map<uint32_t, ShmRing> ring_out, ring_in;
    std::map<uint32_t, Doorbell> bell_of;
    std::unique_ptr<Doorbell> my_bell;
    if (shm) {
      auto map = [&](const std::string& name, size_t bytes) {
        maps.emplace_back(ipc_dir + "/" + name, bytes);
        return maps.back().data();
      };
      maps.reserve(1 + 3 * sync.neighbours().size());
      my_bell = std::make_unique<Doorbell>(map("bell-" + std::to_string(self), Doorbell::Bytes()));
      for (const Sync::Neighbour& nb : sync.neighbours()) {
        std::string me = std::to_string(self), q = std::to_string(nb.q);
        ring_out.emplace(
            nb.q, ShmRing(map("ring-" + me + "-" + q, ShmRing::Bytes(kRingBytes)), kRingBytes));
        ring_in.emplace(
            nb.q, ShmRing(map("ring-" + q + "-" + me, ShmRing::Bytes(kRingBytes)), kRingBytes));
        bell_of.emplace(nb.q, Doorbell(map("bell-" + q, Doorbell::Bytes())));
      }
      pull.close();  // nothing comes this way
    } else {
      for (const Sync::Neighbour& nb : sync.neighbours()) {
        zmq::socket_t p(ctx, zmq::socket_type::push);
        p.set(zmq::sockopt::sndhwm, 0);
        p.set(zmq::sockopt::linger, 5000);
        p.connect(rc.data_endpoints(nb.q));
        push.emplace(nb.q, std::move(p));
      }
    }

    control::ToLauncher res;
    control::Result* result = res.mutable_result();
    std::vector<engine::Event> inbox;
    auto last_hb = Clock::now();
    auto heartbeat = [&](SimTime clock) {
      if (Clock::now() - last_hb < kHeartbeatEvery) return;
      last_hb = Clock::now();
      control::ToLauncher hb;
      hb.mutable_heartbeat()->set_clock_ps(clock);
      hb.mutable_heartbeat()->set_events(eng.events());
      SendProto(ctl, hb);
    };
    // Batches that came in while a full ring held up a send (below).
    std::vector<std::string> deferred;
    // One batch from a neighbour: its events into the queue, its header into the sync state.
    // Held as the std::function ShmRing::Drain takes, so the polling loops convert nothing.
    using BatchFn = std::function<void(const void*, size_t)>;
    const BatchFn take = [&](const void* data, size_t len) {
      engine::Batch head;
      inbox.clear();
      if (!engine::DecodeBatch(data, len, &eng.pool(), &head, &inbox) ||
          !sync.IsNeighbour(head.from))
        throw std::runtime_error("malformed event batch received");
      SimTime min_time = INT64_MAX;
      for (const engine::Event& e : inbox) {
        if (e.time < eng.now())
          throw std::runtime_error("an event for " + std::to_string(e.time) + " ps from process " +
                                   std::to_string(head.from) +
                                   " arrived after the clock passed it (" +
                                   std::to_string(eng.now()) + " ps): a synchronisation error");
        min_time = std::min(min_time, e.time);
        eng.Inject(e);
      }
      sync.Received(head.from, head.promise, head.need, head.ack, head.count, min_time);
    };
    // Hands every batch waiting in the rings to `into` (take, or a copy for later); how many.
    auto drain_rings = [&](const BatchFn& into) {
      size_t n = 0;
      for (auto& [q, r] : ring_in) n += r.Drain(into);
      return n;
    };
    const BatchFn defer = [&](const void* d, size_t len) {
      deferred.emplace_back(static_cast<const char*>(d), len);
    };
    // What this process waits for, after a silent second (IBEMU_TRACE_SYNC).
    auto trace_wait = [&] {
      std::fprintf(stderr, "p%u waits at %lld ps, next event %lld ps:\n%s", self,
                   static_cast<long long>(eng.now()), static_cast<long long>(eng.NextEventTime()),
                   sync.Describe().c_str());
    };
    // An abort from the launcher ends this process (status 3).
    auto aborted = [&]() -> bool {
      zmq::message_t m;
      if (!ctl.recv(m, zmq::recv_flags::dontwait)) return false;
      control::ToProcess c;
      if (c.ParseFromArray(m.data(), static_cast<int>(m.size())) && c.has_abort()) {
        std::fprintf(stderr, "ibemu worker %u: stopping: %s\n", self, c.abort().reason().c_str());
        return true;
      }
      return false;
    };
    bool stop = false;
    auto promise_all = [&] {
      sync.Promises(
          eng.NextEventTime(),
          [&](Sync::Neighbour& nb, SimTime promise, SimTime need, uint32_t ack) {
            engine::BatchWriter& w = remote.writer(nb.q);
            const std::string& b = w.Finish(promise, need, ack);
            if (shm) {
              // A full ring waits for its reader, who may be waiting to send to us: so read
              // what comes meanwhile, to take in once these promises are made (taken in now, it
              // would be acknowledged by promises made before it).
              ShmRing& r = ring_out.at(nb.q);
              while (!r.TryWrite(b.data(), b.size()) && !stop) {
                if (drain_rings(defer) == 0) std::this_thread::yield();
                if (aborted()) stop = true;
              }
              bell_of.at(nb.q).Ring();
            } else {
              push.at(nb.q).send(zmq::buffer(b), zmq::send_flags::none);
            }
            sync.Sent(nb, w.count(), w.min_time());
            result->set_frames_sent(result->frames_sent() + w.count());
            result->set_frame_bytes_sent(result->frame_bytes_sent() + b.size());
            result->set_batches_sent(result->batches_sent() + 1);
            w.Reset(self);
          },
          [&](uint32_t q) {
            const engine::BatchWriter& w = remote.writer(q);
            return Sync::Waiting{w.count(), w.min_time()};
          });
    };
    // Sends each neighbour what it needs: the events for it, and the promise (with the
    // acknowledgement) when it would let the neighbour go further.
    auto send = [&] {
      promise_all();
      while (!deferred.empty() && !stop) {
        std::vector<std::string> batches;
        batches.swap(deferred);
        for (const std::string& b : batches) take(b.data(), b.size());
        promise_all();
      }
    };

    double setup_s = std::chrono::duration<double>(Clock::now() - t_setup).count();
    eng.StartAll();
    zmq::pollitem_t items[] = {{pull.handle(), 0, ZMQ_POLLIN, 0}, {ctl.handle(), 0, ZMQ_POLLIN, 0}};
    // Spinning on the rings pays only while every process has a core of its own.
    const bool spin = n <= std::max(1u, std::thread::hardware_concurrency());
    auto silent_since = Clock::now();
    for (;;) {
      SimTime bound = sync.Bound(eng.NextEventTime(), eng.now());
      auto t_run = Clock::now();
      if (!shm) {
        if (bound > eng.now()) eng.RunUntil(bound);
      } else {
        // Within the window, news is taken in and sent every few events: a neighbour across a
        // bridge waits for this process's acknowledgement, which would otherwise come only
        // after the whole window, so two processes would take turns instead of running at once.
        // The window's last piece is followed by the send below.
        while (!eng.RunSome(bound, kEventsBetweenNews)) {
          drain_rings(take);
          send();
          if (stop) return 3;
          bound = sync.Bound(eng.NextEventTime(), eng.now());
        }
      }
      auto t_ran = Clock::now();
      run_s += std::chrono::duration<double>(t_ran - t_run).count();
      send();
      if (stop) return 3;
      heartbeat(eng.now());
      if (eng.now() >= s.duration) break;
      auto t_wait = Clock::now();
      while (sync.Bound(eng.NextEventTime(), eng.now()) <= eng.now()) {
        if (shm) {
          uint32_t seen = my_bell->Count();
          size_t got = drain_rings(take);
          if (got == 0) {
            // With more processes than cores, each look follows a yield of the core: a
            // microsecond or two, where sleeping on the doorbell costs a futex wake-up for every
            // batch (about 15 us), and the neighbour's answer usually comes within the yields.
            auto until = Clock::now() + (spin ? kSpin : kYieldSpin);
            for (int i = 1; got == 0; ++i) {
              if (!spin) std::this_thread::yield();
              got = drain_rings(take);
              if ((!spin || i % 64 == 0) && Clock::now() > until) break;
            }
          }
          if (got == 0) {
            if (aborted()) return 3;
            if (trace && Clock::now() - silent_since > std::chrono::seconds(1)) {
              trace_wait();
              silent_since = Clock::now();
            }
            my_bell->Wait(seen, 100);
          } else {
            silent_since = Clock::now();
            // Acknowledgements and promises that the news allows go out at once: a neighbour
            // may be waiting for them while this process still waits for another.
            send();
            if (stop) return 3;
          }
        } else {
          // A second with nothing from anyone: say what this process waits for.
          if (zmq::poll(items, 2, std::chrono::milliseconds(1000)) == 0 && trace) trace_wait();
          if ((items[1].revents & ZMQ_POLLIN) && aborted()) return 3;
          if (items[0].revents & ZMQ_POLLIN) {
            zmq::message_t m;
            while (pull.recv(m, zmq::recv_flags::dontwait)) take(m.data(), m.size());
            send();
          }
        }
        if (watch_parent && getppid() != parent) return fail("the launcher is gone");
        heartbeat(eng.now());
      }
      wait_s += std::chrono::duration<double>(Clock::now() - t_wait).count();
      if (trace && (++trace_rows % 200) == 0)
        std::fprintf(stderr, "p%u bound %lld run %.0f us wait %.0f us at %.6f\n", self,
                     static_cast<long long>(bound),
                     std::chrono::duration<double>(t_ran - t_run).count() * 1e6,
                     std::chrono::duration<double>(Clock::now() - t_wait).count() * 1e6,
                     std::chrono::duration<double>(Clock::now().time_since_epoch()).count());
    }
    result->set_run_seconds(run_s);
    result->set_wait_seconds(wait_s);
    result->set_setup_seconds(setup_s);
    for (int i : local)
      if (i < static_cast<int>(f->devices.size())) f->devices[i]->FinishStats(s.duration);
    FillResult(s, *f, eng, self, result);
    SendProto(ctl, res);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return 0;
}

std::vector<uint32_t> PlanPartitions(const scenario::Scenario& s, int partitions, bool per_device) {
  std::vector<uint32_t> part = AssignPartitions(s.topo, partitions, per_device);
  if (NumLps(s) > part.size()) part.push_back(0);  // the side band (H7) runs in partition 0
  CheckPartitions(s, part);
  return part;
}

RunResult RunPartitioned(const scenario::Scenario& s, const PartitionOptions& o) {
  auto t0 = Clock::now();
  std::vector<uint32_t> part = o.plan;
  if (part.empty())
    part = PlanPartitions(s, o.partitions, o.per_device);
  else
    CheckPartitions(s, part);
  uint32_t n = *std::max_element(part.begin(), part.end()) + 1;

  char tmpl[] = "/tmp/ibemu-XXXXXX";
  if (!mkdtemp(tmpl)) throw std::runtime_error("cannot create a directory for ipc endpoints");
  std::string dir = tmpl;
  struct Cleanup {
    std::string d;
    ~Cleanup() { std::filesystem::remove_all(d); }
  } cleanup{dir};

  zmq::context_t ctx;
  zmq::socket_t router(ctx, zmq::socket_type::router);
  router.set(zmq::sockopt::linger, 0);
  std::string ep =
      o.transport == "tcp" ? "tcp://" + o.bind_host + ":*" : "ipc://" + dir + "/control";
  router.bind(ep);
  ep = Advertised(router.get(zmq::sockopt::last_endpoint), o.bind_host);

  std::string exe =
      o.exe.empty() ? std::filesystem::read_symlink("/proc/self/exe").string() : o.exe;
  std::vector<pid_t> pids(n, -1);
  std::vector<bool> finished(n, false);
  if (o.on_listening) {
    o.on_listening(ep);
  } else if (!o.spawn) {
    // Processes on other hosts bind their data sockets on their own --bind address; the launcher
    // cannot waitpid them, so only the silence limit detects their death.
    std::fprintf(stderr,
                 "ibemu: waiting for %u emulator processes; run on the hosts of your choice:\n", n);
    for (uint32_t k = 0; k < n; ++k)
      std::fprintf(stderr,
                   "  ibemu worker --launcher %s --partition %u --bind <that host's address>\n",
                   ep.c_str(), k);
  }
  for (uint32_t k = 0; k < n && o.spawn; ++k) {
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // a launcher that dies takes its processes with it
      std::string ks = std::to_string(k);
      const char* ipc = o.transport == "tcp" ? "" : dir.c_str();
      execl(exe.c_str(), "ibemu", "worker", "--launcher", ep.c_str(), "--partition", ks.c_str(),
            "--ipc-dir", ipc, "--bind", o.bind_host.c_str(), "--watch-parent",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    pids[k] = pid;
  }

  std::vector<Clock::time_point> last_seen(n, Clock::now());
  std::vector<bool> hello_seen(n, false);
  auto abort_all = [&](const std::string& why) {
    // Every process still running hears it, also those started on other hosts.
    for (uint32_t k = 0; k < n; ++k) {
      if (finished[k] || (pids[k] < 0 && !hello_seen[k])) continue;
      control::ToProcess m;
      m.mutable_abort()->set_reason(why);
      std::string id = "p" + std::to_string(k);
      router.send(zmq::buffer(id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      SendProto(router, m);
    }
    auto until = Clock::now() + std::chrono::seconds(3);
    for (uint32_t k = 0; k < n; ++k) {
      while (pids[k] > 0 && Clock::now() < until) {
        if (waitpid(pids[k], nullptr, WNOHANG) == pids[k])
          pids[k] = -1;
        else
          usleep(20000);
      }
      if (pids[k] > 0) {
        kill(pids[k], SIGKILL);
        waitpid(pids[k], nullptr, 0);
        pids[k] = -1;
      }
    }
    throw std::runtime_error(why);
  };
  // Reaps children; a process that ended before sending its result is a failure.
  auto check_children = [&] {
    for (uint32_t k = 0; k < n; ++k) {
      int st = 0;
      if (pids[k] > 0 && waitpid(pids[k], &st, WNOHANG) == pids[k]) {
        pid_t dead = pids[k];
        pids[k] = -1;
        if (!finished[k])
          abort_all("emulator process for partition " + std::to_string(k) + " (pid " +
                    std::to_string(dead) + "; devices " + Members(s, part, k) + ") " +
                    DescribeStatus(st) + "; the other processes were stopped");
      }
      // Silence is how a process on another host is found dead; a process started by hand is
      // timed from its hello, not from when the launcher began waiting for it.
      bool watched = pids[k] > 0 || hello_seen[k];
      if (watched && !finished[k] && Clock::now() - last_seen[k] > kSilenceLimit)
        abort_all("emulator process for partition " + std::to_string(k) + " (devices " +
                  Members(s, part, k) + ") has been silent for " +
                  std::to_string(kSilenceLimit.count()) + " s; the other processes were stopped");
    }
  };

  auto recv_one = [&](std::string* from, control::ToLauncher* m) {
    zmq::pollitem_t it{router.handle(), 0, ZMQ_POLLIN, 0};
    for (;;) {
      zmq::poll(&it, 1, std::chrono::milliseconds(100));
      if (it.revents & ZMQ_POLLIN) {
        zmq::message_t idm, body;
        if (!router.recv(idm) || !router.recv(body)) continue;
        *from = idm.to_string();
        if (!m->ParseFromArray(body.data(), static_cast<int>(body.size()))) continue;
        uint32_t k = static_cast<uint32_t>(std::stoul(from->substr(1)));
        last_seen[k] = Clock::now();
        if (m->has_error())
          abort_all("emulator process for partition " + std::to_string(k) + " (devices " +
                    Members(s, part, k) + ") failed: " + m->error().reason());
        return k;
      }
      check_children();
    }
  };

  std::vector<std::string> endpoints(n);
  for (uint32_t got = 0; got < n;) {
    std::string from;
    control::ToLauncher m;
    uint32_t k = recv_one(&from, &m);
    if (m.has_hello()) {
      hello_seen[k] = true;
      endpoints[k] = m.hello().data_endpoint();
      ++got;
    }
  }
  control::ToProcess cfg;
  control::RunConfig* rc = cfg.mutable_run();
  rc->set_scenario_path(std::filesystem::absolute(s.file).string());
  rc->set_seed(s.seed);
  rc->set_duration_ps(s.duration);
  rc->set_measure_from_ps(s.measure_from);
  rc->set_measure_to_ps(s.measure_to);
  rc->set_num_partitions(n);
  for (uint32_t p : part) rc->add_lp_partition(p);
  for (const auto& e : endpoints) rc->add_data_endpoints(e);
  for (uint32_t k = 0; k < n; ++k) {
    std::string id = "p" + std::to_string(k);
    router.send(zmq::buffer(id), zmq::send_flags::sndmore);
    SendProto(router, cfg);
  }

  RunResult r;
  r.mode = o.per_device ? "per-device" : "partitioned";
  r.partitions = static_cast<int>(n);
  r.flows.Init(
      [&] {
        std::vector<std::string> names;
        for (const auto& fi : s.flows) names.push_back(fi.name);
        return names;
      }(),
      s.interval, s.bins());
  r.lp_digests.assign(part.size(), 0);
  std::vector<std::pair<uint32_t, PortSummary>> ports;
  std::vector<SimTime> clocks(n, 0);
  uint64_t frames = 0, frame_bytes = 0, batches = 0;
  long rss = 0;
  for (uint32_t done = 0; done < n;) {
    std::string from;
    control::ToLauncher m;
    uint32_t k = recv_one(&from, &m);
    if (m.has_heartbeat()) {
      clocks[k] = m.heartbeat().clock_ps();
      if (o.progress) {
        SimTime c = *std::min_element(clocks.begin(), clocks.end());
        std::fprintf(stderr, "\r  %5.1f%%  t=%.3f ms  (%u processes)", 100.0 * c / s.duration,
                     static_cast<double>(c) / 1e9, n);
      }
      continue;
    }
    if (!m.has_result()) continue;
    const control::Result& res = m.result();
    finished[k] = true;
    ++done;
    for (const auto& lp : res.lps()) r.lp_digests[lp.lp()] = lp.digest();
    for (const auto& fr : res.flows()) {
      stats::FlowStats fs;
      fs.InitBins(s.interval, s.bins());
      // Zero bins are left unset: the series are sparse (stats/binned.h).
      auto set = [](stats::BinnedCounter& c, int b, int64_t x) {
        if (x) c.Set(b, x);
      };
      for (int b = 0; b < fr.rx_bins_size() && b < s.bins(); ++b) {
        set(fs.rx_payload, b, fr.rx_bins(b));
        set(fs.tx_payload, b, fr.tx_bins(b));
      }
      for (int b = 0; b < fr.rx_count_bins_size() && b < s.bins(); ++b) {
        set(fs.rx_count, b, fr.rx_count_bins(b));
        set(fs.latency_sum, b, fr.latency_sum_bins(b));
        if (int64_t x = fr.latency_max_bins(b)) fs.latency_max.Set(b, x);
      }
      fs.rx_fecn = fr.rx_fecn();
      fs.ranks_done = fr.ranks_done();
      fs.finish = fr.finish();
      fs.latency =
          stats::LatencyHistogram::FromRaw({fr.latency_counts().begin(), fr.latency_counts().end()},
                                           fr.latency_n(), fr.latency_sum(), fr.latency_max());
      fs.rx_packets = fr.rx_packets();
      fs.tx_packets = fr.tx_packets();
      fs.messages = fr.messages();
      r.flows.flows[fr.flow()].Merge(fs);
    }
    for (const auto& pr : res.ports()) {
      PortSummary ps;
      ps.device = pr.device();
      ps.peer = pr.peer();
      ps.port = static_cast<int>(pr.port());
      ps.vl = static_cast<int>(pr.vl());
      ps.mean_occupancy_blocks = pr.mean_occupancy_blocks();
      ps.high_water_blocks = pr.high_water_blocks();
      ps.credit_stalled_fraction = pr.credit_stalled_fraction();
      ps.tx_bytes = pr.tx_bytes();
      ps.tx_packets = pr.tx_packets();
      ps.tx_fc_packets = pr.tx_fc_packets();
      ps.credit_violations = pr.credit_violations();
      ps.dropped = pr.dropped();
      ps.tx_fecn = pr.tx_fecn();
      ps.tx_becn = pr.tx_becn();
      ps.occupancy_series.assign(pr.occupancy_series().begin(), pr.occupancy_series().end());
      ps.stalled_series.assign(pr.stalled_series().begin(), pr.stalled_series().end());
      ports.push_back({pr.lp(), ps});
    }
    r.events += res.events();
    r.process_stats.push_back(
        {k, res.events(), res.run_seconds(), res.wait_seconds(), res.setup_seconds()});
    r.packet_hops += res.packet_hops();
    frames += res.frames_sent();
    frame_bytes += res.frame_bytes_sent();
    batches += res.batches_sent();
    rss = std::max<long>(rss, res.peak_rss_kb());
  }
  if (o.progress) std::fprintf(stderr, "\n");
  for (uint32_t k = 0; k < n; ++k)
    if (pids[k] > 0) waitpid(pids[k], nullptr, 0);
  std::stable_sort(ports.begin(), ports.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.second.port != b.second.port) return a.second.port < b.second.port;
    return a.second.vl < b.second.vl;
  });
  for (auto& [lp, ps] : ports) r.ports.push_back(ps);
  r.digest = CombineDigests(r.lp_digests);
  r.cross_frames = frames;
  r.cross_frame_bytes = frame_bytes;
  r.cross_batches = batches;
  r.wall_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  r.peak_rss_kb = std::max(rss, PeakRssKb());
  return r;
}

}  // namespace ibemu::fabric
