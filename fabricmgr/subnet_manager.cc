#include "fabricmgr/subnet_manager.h"

#include <signal.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <zmq.hpp>

#include "common/transport/run_dir.h"
#include "fabricmgr/discovery.h"

namespace ibemu::fabricmgr {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;
using namespace mad;

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) {
  g_stop = 1;
}

void Log(const std::string& line) {
  std::fprintf(stderr, "ibemu-fabricmgr: %s\n", line.c_str());
  std::fflush(stderr);
}

int64_t MsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

std::string LidFile(const std::string& state_dir) {
  return state_dir.empty() ? std::string() : state_dir + "/guid2lid";
}

}  // namespace

SubnetManager::SubnetManager(MadPort& port, const Policy& policy, const std::string& state_dir)
    : port_(port),
      policy_(policy),
      smp_(port, [this](const ReceivedMad& m) { OnUnsolicited(m); }),
      lids_(LidFile(state_dir)),
      config_(smp_, policy) {
  status_.port_guid = port.port_guid();
  status_.priority = policy.priority;
  status_.engine = policy.engine;
  status_.policy_file = policy.file;
  status_.lid_file = lids_.file();
  for (const std::string& w : lids_.warnings()) Log(w);
}

void SubnetManager::OnUnsolicited(const ReceivedMad& r) {
  MadBuffer m = r.mad;
  MadView v{m.data()};
  bool dr = v.is_dr();
  uint16_t dlid = dr ? kPermissiveLid : r.slid;
  if (v.method() == method::kTrap) {
    // Repress it first, so the SMA stops repeating it: the same MAD back, method TrapRepress.
    uint16_t trap = static_cast<uint16_t>(Get(v.smp_data(), notice::kTrapNumber));
    uint16_t issuer = static_cast<uint16_t>(Get(v.smp_data(), notice::kIssuerLid));
    v.set_method(method::kTrapRepress);
    v.set_status(0);
    if (dr) v.set_direction(true);
    port_.Send(m, dlid, 0, 0);
    char line[128];
    std::snprintf(line, sizeof line, "trap %u from LID %u: TrapRepress sent", trap,
                  issuer ? issuer : r.slid);
    Log(line);
    if (trap == notice::kTrapLinkStateChange || trap == notice::kTrapCapabilityMaskChange)
      Request("trap " + std::to_string(trap));
    return;
  }
  if (v.method() != method::kGet && v.method() != method::kSet) return;
  // A Get or Set that reached this port's SM rather than its SMA: SMInfo.
  uint16_t st = status::kOk;
  if (v.attr_id() != attr::kSmInfo) {
    st = status::kBadMethodAttr;
  } else {
    // A Set (handover, acknowledge, ...) is not acted on: this SM stays master.
    uint8_t* d = v.smp_data();
    std::memset(d, 0, kSmpDataBytes);
    Set(d, sm_info::kGuid, status_.port_guid);
    Set(d, sm_info::kSmKey, 0);  // only shown to a requester that proves it knows it
    Set(d, sm_info::kActCount, status_.act_count);
    Set(d, sm_info::kPriority, policy_.priority);
    Set(d, sm_info::kSmState, sm_info::kStateMaster);
  }
  v.set_method(method::kGetResp);
  if (dr) v.set_direction(true);
  v.set_status(st);
  port_.Send(m, dlid, 0, 0);
}

bool SubnetManager::HeavySweep(const std::string& why) {
  sweep_requested_ = false;
  ++status_.heavy_sweeps;
  ++status_.act_count;
  auto t0 = Clock::now();
  uint64_t mads0 = smp_.mads_sent();
  Discovery discovery(smp_);
  Subnet s;
  try {
    s = discovery.Run();
  } catch (const std::exception& e) {
    Log(std::string("discovery failed: ") + e.what());
    return false;
  }
  bool changed = s.TopologyKey() != subnet_.TopologyKey();
  char line[512];
  std::snprintf(line, sizeof line,
                "heavy sweep (%s): discovered %zu nodes (%d switches, %zu CAs), %d links%s, "
                "%d SMPs unanswered, %lld ms",
                why.c_str(), s.nodes.size(), s.switches(), s.nodes.size() - s.switches(), s.links(),
                subnet_.nodes.empty() ? "" : (changed ? ", topology changed" : ", unchanged"),
                discovery.unanswered(), static_cast<long long>(MsSince(t0)));
  Log(line);

  // LIDs.
  std::vector<LidRequest> want;
  for (const NodeRecord& n : s.nodes)
    for (int p : n.EndportNumbers()) want.push_back({n.ports[p].guid, n.ports[p].lid()});
  int fresh = 0;
  std::map<uint64_t, uint16_t> lids = lids_.Assign(want, &fresh);
  std::string error;
  if (!lids_.Save(&error)) Log("cannot save the LID table: " + error);
  const NodeRecord& me = s.nodes[s.sm_node];
  uint16_t sm_lid = lids.count(me.ports[s.sm_port].guid) ? lids[me.ports[s.sm_port].guid] : 0;
  std::snprintf(line, sizeof line, "LIDs: %zu ports, %d to (re)assign, SM LID %u%s%s", want.size(),
                fresh, sm_lid, lids_.file().empty() ? "" : "; table ", lids_.file().c_str());
  Log(line);

  // Routes.
  Routes routes;
  try {
    routes = ComputeRoutes(s, lids, policy_.engine, policy_.fallback);
  } catch (const std::exception& e) {
    Log(std::string("routing failed: ") + e.what());
    return false;
  }
  if (!routes.note.empty()) Log("routing: " + routes.note + "; using " + routes.engine);
  status_.engine = routes.engine;
  std::snprintf(line, sizeof line, "routing: engine %s, %d switches, LIDs 1..%u%s",
                routes.engine.c_str(), s.switches(), routes.top_lid,
                routes.result.data_vls > 1
                    ? (", " + std::to_string(routes.result.data_vls) + " VLs by SL").c_str()
                    : "");
  Log(line);

  // Programming, then the port states.
  ConfigStats st = config_.Program(s, lids, routes, sm_lid);
  std::snprintf(line, sizeof line,
                "programmed: %d PortInfo, %d SwitchInfo, %d LFT blocks, %d SL2VL, %d VLArb, "
                "%d P_Key tables; %d refused or unanswered",
                st.port_info, st.switch_info, st.lft_blocks, st.sl2vl, st.vlarb, st.pkey,
                st.failed);
  Log(line);
  if (routes.result.data_vls > 1) {
    int short_of_vls = 0;
    for (const NodeRecord& n : s.nodes)
      for (const PortRecord& p : n.ports)
        if (n.is_switch() && p.num > 0 && p.linked() &&
            DataVlsOfCode(static_cast<int>(p.Field(port_info::kOperationalVls))) <
                routes.result.data_vls)
          ++short_of_vls;
    if (short_of_vls)
      Log("warning: " + routes.engine + " needs " + std::to_string(routes.result.data_vls) +
          " data VLs, " + std::to_string(short_of_vls) +
          " switch ports operate fewer: their SL2VL falls back to the lower VLs and the routes "
          "are not deadlock-free");
  }
  int armed = config_.MovePorts(s, port_info::kStateInit, port_info::kStateArmed, &st);
  Log("ports armed: " + std::to_string(armed));
  int active = config_.MovePorts(s, port_info::kStateArmed, port_info::kStateActive, &st);
  Log("ports active: " + std::to_string(active));
  int not_active = config_.CountNotActive(s);
  for (const std::string& e : st.errors) Log("  " + e);

  subnet_ = std::move(s);
  assigned_ = std::move(lids);
  routes_ = std::move(routes);
  status_.lid = sm_lid;
  const PortRecord& sm_port = subnet_.nodes[subnet_.sm_node].ports[subnet_.sm_port];
  if (!sm_port.linked()) Log("the SM's own port has no link: nothing to manage");
  bool up = not_active == 0 && st.failed == 0 && discovery.unanswered() == 0 && sm_port.linked();
  status_.subnet_up = up;
  std::snprintf(line, sizeof line, "%s in %lld ms, %llu SMPs", up ? "SUBNET UP" : "subnet not up",
                static_cast<long long>(MsSince(t0)),
                static_cast<unsigned long long>(smp_.mads_sent() - mads0));
  if (!up)
    std::snprintf(line + std::strlen(line), sizeof line - std::strlen(line),
                  ": %d linked ports not Active", not_active);
  Log(line);
  return up;
}

bool SubnetManager::LightSweep(std::string* what) {
  ++status_.light_sweeps;
  ++status_.act_count;  // SMInfo:ActCount: the heartbeat a standby SM polls
  std::vector<Smp> reqs;
  struct At {
    int node, port;  // port -1: SwitchInfo
  };
  std::vector<At> at;
  for (size_t i = 0; i < subnet_.nodes.size(); ++i) {
    const NodeRecord& n = subnet_.nodes[i];
    if (n.is_switch()) {
      reqs.push_back(SwitchInfoGet(n.path));
      at.push_back({static_cast<int>(i), -1});
      continue;
    }
    for (int p : n.EndportNumbers()) {
      reqs.push_back(PortInfoGet(n.path, p));
      at.push_back({static_cast<int>(i), p});
    }
  }
  std::vector<SmpReply> got = smp_.Transact(reqs);
  for (size_t k = 0; k < got.size(); ++k) {
    const NodeRecord& n = subnet_.nodes[at[k].node];
    if (!got[k].ok()) {
      *what = n.name() + " does not answer";
      return true;
    }
    if (at[k].port < 0) {
      if (Get(got[k].data.data(), switch_info::kPortStateChange)) {
        *what = n.name() + " reports a port state change";
        return true;
      }
      continue;
    }
    const PortRecord& was = n.ports[at[k].port];
    uint8_t state = static_cast<uint8_t>(Get(got[k].data.data(), port_info::kPortState));
    uint16_t lid = static_cast<uint16_t>(Get(got[k].data.data(), port_info::kLid));
    if (state != was.state() || lid != was.lid()) {
      *what = n.name() + " port " + std::to_string(at[k].port) + " is " + StateName(state) +
              " with LID " + std::to_string(lid);
      return true;
    }
  }
  return false;
}

json SubnetManager::Answer(const json& request) const {
  return fabricmgr::Answer(request, status_, subnet_, assigned_, routes_);
}

namespace {

// Asks the daemon; nullopt when nobody answers within timeout_ms.
std::optional<json> Ask(zmq::context_t& ctx, const std::string& endpoint, const json& request,
                        int timeout_ms) {
  zmq::socket_t req(ctx, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.set(zmq::sockopt::rcvtimeo, timeout_ms);
  req.set(zmq::sockopt::sndtimeo, timeout_ms);
  req.connect(endpoint);
  std::string text = request.dump();
  if (!req.send(zmq::buffer(text), zmq::send_flags::none)) return std::nullopt;
  zmq::message_t reply;
  if (!req.recv(reply, zmq::recv_flags::none)) return std::nullopt;
  return json::parse(reply.to_string(), nullptr, false);
}

}  // namespace

int RunDaemon(const RunOptions& o) {
  Policy policy;
  try {
    policy = o.policy_file.empty() ? DefaultPolicy() : LoadPolicy(o.policy_file);
    CheckEngine(policy.engine);
    CheckEngine(policy.fallback);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: %s\n", e.what());
    return 2;
  }
  int sweep = o.sweep_seconds >= 0 ? o.sweep_seconds
                                   : (policy.sweep_seconds >= 0 ? policy.sweep_seconds : 10);
  if (std::string e = transport::PrepareRunDir(transport::ResolveRunDir()); !e.empty()) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: %s\n", e.c_str());
    return 2;
  }
  zmq::context_t ctx;
  std::string endpoint = ControlEndpoint(o.name);
  if (std::filesystem::exists(endpoint.substr(6)) && Ask(ctx, endpoint, {{"show", "sm"}}, 300)) {
    std::fprintf(stderr,
                 "ibemu-fabricmgr: error: an ibemu-fabricmgr named '%s' is already running "
                 "(%s); use --name\n",
                 o.name.c_str(), endpoint.c_str());
    return 2;
  }
  if (!o.state_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.state_dir, ec);
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  try {
    MadPort port(o.port_guid, SmAgents());
    port.AssertIsSm();
    char line[256];
    std::snprintf(line, sizeof line,
                  "SM on %s port %d (GUID %s), priority %u, engine %s, sweep %d s, policy %s, "
                  "control %s",
                  port.ca_name().c_str(), port.port_num(), GuidString(port.port_guid()).c_str(),
                  policy.priority, policy.engine.c_str(), sweep,
                  policy.file.empty() ? "(defaults)" : policy.file.c_str(), endpoint.c_str());
    Log(line);
    SubnetManager sm(port, policy, o.state_dir);
    zmq::socket_t rep(ctx, zmq::socket_type::rep);
    rep.set(zmq::sockopt::linger, 0);
    rep.bind(endpoint);

    bool up = sm.HeavySweep("start");
    // An SM whose subnet did not come up tries again soon, not only at the next light sweep:
    // after 1 s, then 2, 4, ... up to 30 s while it keeps failing.
    int backoff = 1;
    auto next_light = Clock::now() + std::chrono::seconds(sweep);
    auto retry = Clock::now() + std::chrono::seconds(backoff);
    auto after_heavy = [&] {
      backoff = up ? 1 : std::min(backoff * 2, 30);
      retry = Clock::now() + std::chrono::seconds(up ? 1 : backoff);
    };
    while (!g_stop) {
      auto now = Clock::now();
      auto until = sweep > 0 ? next_light : now + std::chrono::hours(1);
      if (!up) until = std::min(until, retry);
      int wait = static_cast<int>(std::clamp<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count(), 0, 200));
      zmq::pollitem_t items[] = {{rep.handle(), 0, ZMQ_POLLIN, 0},
                                 {nullptr, port.fd(), ZMQ_POLLIN, 0}};
      try {
        zmq::poll(items, 2, std::chrono::milliseconds(wait));
      } catch (const zmq::error_t& e) {
        if (e.num() != EINTR) throw;
        continue;
      }
      if (items[0].revents & ZMQ_POLLIN) {
        zmq::message_t msg;
        if (rep.recv(msg, zmq::recv_flags::dontwait)) {
          json req = json::parse(msg.to_string(), nullptr, false);
          json reply =
              req.is_discarded() ? json{{"ok", false}, {"error", "not JSON"}} : sm.Answer(req);
          std::string text = reply.dump();
          rep.send(zmq::buffer(text), zmq::send_flags::none);
        }
      }
      if (items[1].revents & ZMQ_POLLIN) sm.Poll(0);
      now = Clock::now();
      if (sm.sweep_requested()) {
        up = sm.HeavySweep(sm.sweep_reason());
        after_heavy();
        next_light = Clock::now() + std::chrono::seconds(sweep);
      } else if (!up && now >= retry) {
        up = sm.HeavySweep("retry");
        after_heavy();
        next_light = Clock::now() + std::chrono::seconds(sweep);
      } else if (sweep > 0 && now >= next_light) {
        std::string what;
        if (sm.LightSweep(&what)) {
          Log("light sweep: " + what);
          up = sm.HeavySweep("light sweep");
          after_heavy();
        }
        next_light = Clock::now() + std::chrono::seconds(sweep);
      }
    }
    Log("stopping");
  } catch (const MadPortError& e) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: %s\n", e.what());
    return 2;
  } catch (const zmq::error_t& e) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: %s: %s\n", endpoint.c_str(), e.what());
    return 2;
  }
  return 0;
}

int Show(const std::string& name, const std::string& what, const std::string& sw, bool as_json,
         int timeout_ms) {
  zmq::context_t ctx;
  std::string endpoint = ControlEndpoint(name);
  json req = {{"show", what}};
  if (!sw.empty()) req["switch"] = sw;
  std::optional<json> reply = std::filesystem::exists(endpoint.substr(6))
                                  ? Ask(ctx, endpoint, req, timeout_ms)
                                  : std::nullopt;
  if (!reply || reply->is_discarded()) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: no ibemu-fabricmgr named '%s' answered on %s\n",
                 name.c_str(), endpoint.c_str());
    return 2;
  }
  if (!reply->value("ok", false)) {
    std::fprintf(stderr, "ibemu-fabricmgr: error: %s\n", reply->value("error", "?").c_str());
    return 2;
  }
  if (as_json) {
    std::printf("%s\n", reply->dump(2).c_str());
    return 0;
  }
  std::string text = what == "nodes"   ? FormatNodes(*reply)
                     : what == "ports" ? FormatPorts(*reply)
                                       : FormatRoutes(*reply);
  std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace ibemu::fabricmgr
