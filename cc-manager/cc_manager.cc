// The manager's sweep (discovery, and programming of what needs it) and its answers to the CLI.
#include "cc-manager/cc_manager.h"

#include <cstdio>

#include "common/mad/smp_attributes.h"
#include "fabricmgr/discovery.h"

namespace ibemu::ccmgr {

std::vector<fabricmgr::MadAgent> CcManagerAgents() {
  return {{mad::mgmt_class::kSubnDirected, 1, {}},
          {mad::mgmt_class::kSubnLid, 1, {}},
          {mad::mgmt_class::kCongestion, 2, {method::kTrap}}};
}

CcManager::CcManager(fabricmgr::SmpClient& client, CcPolicy policy, CongestionRecord& record,
                     Logger log)
    : client_(client), policy_(std::move(policy)), record_(record), log_(std::move(log)) {
  client_.window = policy_.max_outstanding_mads;
}

bool CcManager::Sweep() {
  fabricmgr::Subnet s;
  try {
    fabricmgr::Discovery d(client_);
    s = d.Run();
  } catch (const std::exception& e) {
    log_(std::string("sweep: ") + e.what());
    return false;
  }
  ++sweeps_;
  lft_.clear();
  if (s.sm_node >= 0) {
    uint16_t own =
        s.nodes[static_cast<size_t>(s.sm_node)].ports[static_cast<size_t>(s.sm_port)].lid();
    if (own != own_lid_ && own_lid_ != 0)
      for (auto& [key, c] : ccas_)
        if (!c.gone()) c.state = CcaState::kPending;
    own_lid_ = own;
  }
  std::set<std::pair<uint64_t, int>> seen;
  auto found = [&](const fabricmgr::NodeRecord& n, int port) {
    const fabricmgr::PortRecord& pr = n.ports[static_cast<size_t>(port)];
    uint16_t lid = pr.lid();
    // LID-routed MADs reach only an Active port with a LID: until the SM has brought it up, a
    // later sweep will find it.
    if (lid == 0 || pr.state() != mad::port_info::kStateActive) return;
    auto key = std::make_pair(n.guid, port);
    seen.insert(key);
    auto [it, fresh] = ccas_.try_emplace(key);
    Cca& c = it->second;
    c.name = n.name();
    c.guid = n.guid;
    c.is_switch = n.is_switch();
    c.port = port;
    c.num_ports = n.num_ports;
    if (fresh) {
      log_("found " + c.name + (c.is_switch ? "" : " port " + std::to_string(port)) + " (LID " +
           std::to_string(lid) + ")");
    } else if (c.lid != lid || c.gone()) {
      log_(c.name + " is back with LID " + std::to_string(lid));
      c.state = CcaState::kPending;
      c.have_log = false;
    }
    c.lid = lid;
  };
  for (const fabricmgr::NodeRecord& n : s.nodes) {
    if (n.is_switch()) {
      if (!n.ports.empty()) found(n, 0);
      continue;
    }
    for (int p : n.EndportNumbers()) found(n, p);
  }
  for (auto& [key, c] : ccas_)
    if (!seen.count(key) && !c.gone()) {
      log_(c.name + " is gone");
      c.state = CcaState::kGone;
    }
  int programmed = 0, verified = 0;
  for (auto& [key, c] : ccas_) {
    if (c.state == CcaState::kVerified || c.gone()) continue;
    ++programmed;
    verified += Program(c);
  }
  if (programmed > 0)
    log_("programmed " + std::to_string(programmed) + " CCAs, " + std::to_string(verified) +
         " verified");
  ReadKeys();
  return true;
}

std::vector<Cca*> CcManager::Match(const std::string& node, int port, std::string* error) {
  std::vector<Cca*> out;
  for (auto& [key, c] : ccas_) {
    bool named = node.empty() || c.name == node || fabricmgr::GuidString(c.guid) == node;
    if (named && (port == 0 || c.is_switch || c.port == port)) out.push_back(&c);
  }
  if (out.empty()) {
    std::string known;
    for (auto& [key, c] : ccas_)
      if (known.find(c.name + " ") == std::string::npos) known += c.name + " ";
    *error = "no CCA of '" + node + "'" + (port ? " port " + std::to_string(port) : "") +
             " (known: " + known + ")";
  }
  return out;
}

NodeState CcManager::Describe(const Cca& c) const {
  NodeState s;
  s.set_name(c.name);
  s.set_guid(c.guid);
  s.set_lid(c.lid);
  s.set_is_switch(c.is_switch);
  s.set_port(c.port);
  s.set_state(StateName(c.state));
  s.set_detail(c.detail);
  s.set_programmed(c.programmed);
  s.set_events(c.events);
  s.set_cc_key_violations(c.key_violations);
  s.set_traps(c.traps);
  return s;
}

Status CcManager::MakeStatus() const {
  Status s;
  s.set_policy(policy_.file.empty() ? "(defaults)" : policy_.file);
  s.set_port(port_description_);
  uint32_t verified = 0, failed = 0, live = 0;
  uint64_t counted = 0;
  for (const auto& [key, c] : ccas_) {
    counted += c.events;
    if (c.gone()) continue;
    ++live;
    if (c.state == CcaState::kVerified)
      ++verified;
    else if (c.state != CcaState::kPending)
      ++failed;
  }
  s.set_ccas(live);
  s.set_verified(verified);
  s.set_failed(failed);
  s.set_mads_sent(client_.mads_sent());
  s.set_sweeps(sweeps_);
  s.set_events(record_.last_seq());
  s.set_events_counted(counted);
  s.set_traps(traps_);
  s.set_key_violations(key_violations_);
  s.set_export_dir(record_.dir());
  return s;
}

Reply CcManager::Handle(const Request& q) {
  Reply out;
  std::string error;
  switch (q.what_case()) {
    case Request::kApply: {
      try {
        policy_ = LoadPolicy(q.apply().path());
      } catch (const PolicyError& e) {
        out.set_error(e.what());
        return out;
      }
      client_.window = policy_.max_outstanding_mads;
      log_("policy " + policy_.file + " applied");
      int verified = 0, total = 0;
      for (auto& [key, c] : ccas_) {
        if (c.gone()) continue;
        ++total;
        verified += Program(c);
        *out.add_nodes() = Describe(c);
      }
      out.set_message(std::to_string(total) + " CCAs programmed, " + std::to_string(verified) +
                      " verified");
      out.set_ok(verified == total);
      if (verified != total) out.set_error("some CCAs did not take the policy");
      return out;
    }
    case Request::kShow: {
      const Show& s = q.show();
      if (s.node().empty()) {
        for (auto& [key, c] : ccas_) *out.add_nodes() = Describe(c);
        out.set_ok(true);
        return out;
      }
      std::vector<Cca*> m = Match(s.node(), s.port(), &error);
      for (Cca* c : m) {
        NodeState n = Describe(*c);
        if (!c->gone() && !ReadBack(*c, &n, &error)) {
          out.set_error(error);
          return out;
        }
        *out.add_nodes() = n;
      }
      out.set_ok(!m.empty());
      out.set_error(error);
      return out;
    }
    case Request::kSet: {
      const SetOption& s = q.set();
      std::vector<Cca*> m;
      if (!s.node().empty()) {
        m = Match(s.node(), 0, &error);
        if (m.empty()) {
          out.set_error(error);
          return out;
        }
      }
      try {
        if (s.port() > 0) {
          if (s.node().empty() || !m.front()->is_switch)
            throw PolicyError("--port sets a switch port's element: give the switch with --node");
          policy_.SetPortOption(s.node(), s.port(), s.key(), s.value());
        } else {
          policy_.SetOption(s.node(), {s.key(), s.sl(), s.value()});
        }
      } catch (const PolicyError& e) {
        out.set_error(e.what());
        return out;
      }
      if (s.node().empty())
        for (auto& [key, c] : ccas_)
          if (!c.gone()) m.push_back(&c);
      int verified = 0;
      for (Cca* c : m) {
        verified += Program(*c);
        *out.add_nodes() = Describe(*c);
      }
      log_("set " + s.key() + (s.sl() >= 0 ? " " + std::to_string(s.sl()) : "") + " " + s.value() +
           (s.node().empty() ? "" : " on " + s.node()) +
           (s.port() ? " port " + std::to_string(s.port()) : "") + ": " + std::to_string(verified) +
           " of " + std::to_string(m.size()) + " verified");
      out.set_ok(verified == static_cast<int>(m.size()));
      if (!out.ok()) out.set_error("some CCAs did not take the change");
      return out;
    }
    case Request::kLog: {
      for (Event& e : record_.Since(q.log().after(), 1000)) *out.add_events() = std::move(e);
      out.set_last_seq(record_.last_seq());
      out.set_ok(true);
      return out;
    }
    case Request::kStatus:
      ReadKeys();
      *out.mutable_status() = MakeStatus();
      out.set_ok(true);
      return out;
    default:
      out.set_error("empty request");
      return out;
  }
}

}  // namespace ibemu::ccmgr
