#include "cc-manager/cc_manager.h"

#include <algorithm>
#include <cstdio>

#include "common/mad/gs_attributes.h"
#include "common/mad/mad_header.h"
#include "common/mad/smp_attributes.h"
#include "fabricmgr/discovery.h"

namespace ibemu::ccmgr {
namespace {

using fabricmgr::MadReply;
using fabricmgr::MadRequest;
namespace attr = mad::attr;
namespace method = mad::method;
constexpr int kPortsPerBlock = mad::switch_port_congestion_setting::kElementsPerBlock;
constexpr int kCctPerBlock = mad::congestion_control_table::kEntriesPerBlock;

std::string Hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string MaskHex(const std::array<uint8_t, 32>& m) {
  std::string s = "0x";
  char b[4];
  size_t first = 0;
  while (first < 31 && m[first] == 0) ++first;
  for (size_t i = first; i < m.size(); ++i) {
    std::snprintf(b, sizeof b, i == first ? "%x" : "%02x", m[i]);
    s += b;
  }
  return s;
}

int CctBlocks(size_t entries) {
  return std::max<int>(1, static_cast<int>((entries + kCctPerBlock - 1) / kCctPerBlock));
}

const char* AttrName(uint16_t a) {
  switch (a) {
    case attr::kCongestionKeyInfo:
      return "CongestionKeyInfo";
    case attr::kSwitchCongestionSetting:
      return "SwitchCongestionSetting";
    case attr::kSwitchPortCongestionSetting:
      return "SwitchPortCongestionSetting";
    case attr::kCaCongestionSetting:
      return "CACongestionSetting";
    case attr::kCongestionControlTable:
      return "CongestionControlTable";
    case attr::kCongestionLog:
      return "CongestionLog";
    case attr::kClassPortInfo:
      return "ClassPortInfo";
    default:
      return "attribute";
  }
}

// Why a reply is not good, or "".
std::string Problem(const MadRequest& q, const MadReply& r) {
  mad::MadView v{const_cast<uint8_t*>(q.mad.data())};
  std::string what = std::string(AttrName(v.attr_id())) +
                     (v.method() == method::kSet ? " Set" : " Get") + " (modifier " +
                     std::to_string(v.attr_mod()) + ")";
  if (!r.answered) return what + ": no answer (a CC_Key the CCA does not accept?)";
  if (r.status != 0) return what + ": status " + Hex(r.status);
  return "";
}

}  // namespace

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
      for (auto& [key, c] : ccas_) c.state = c.state == "gone" ? c.state : "pending";
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
    } else if (c.lid != lid || c.state == "gone") {
      log_(c.name + " is back with LID " + std::to_string(lid));
      c.state = "pending";
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
    if (!seen.count(key) && c.state != "gone") {
      log_(c.name + " is gone");
      c.state = "gone";
    }
  int programmed = 0, verified = 0;
  for (auto& [key, c] : ccas_) {
    if (c.state == "verified" || c.state == "gone") continue;
    ++programmed;
    verified += Program(c);
  }
  if (programmed > 0)
    log_("programmed " + std::to_string(programmed) + " CCAs, " + std::to_string(verified) +
         " verified");
  ReadKeys();
  return true;
}

bool CcManager::Program(Cca& c) {
  const mad::CcSettings target = policy_.For(c.name, c.guid);
  std::vector<MadRequest> sets;
  ++c.programmed;
  if (policy_.manage_key) {
    MadRequest q = Cc(c, method::kSet, attr::kCongestionKeyInfo, 0);
    using namespace mad::congestion_key_info;
    mad::Set(CcData(q.mad), kCcKey, policy_.cc_key);
    mad::Set(CcData(q.mad), kCcKeyProtectBit, policy_.key_protect);
    mad::Set(CcData(q.mad), kCcKeyLeasePeriod, policy_.key_lease_period);
    mad::Set(CcData(q.mad), kCcKeyViolations, c.key_violations);
    sets.push_back(q);
  }
  if (own_lid_ != 0) {
    // The CCA's traps (Bad CC_Key) come to this port, QP1.
    MadRequest q = Cc(c, method::kSet, attr::kClassPortInfo, 0);
    using namespace mad::class_port_info;
    mad::Set(CcData(q.mad), kTrapLid, own_lid_);
    mad::Set(CcData(q.mad), kTrapQp, 1);
    mad::Set(CcData(q.mad), kTrapQKey, mad::kQp1QKey);
    mad::Set(CcData(q.mad), kTrapPKey, 0xFFFF);
    sets.push_back(q);
  }
  if (c.is_switch) {
    MadRequest q = Cc(c, method::kSet, attr::kSwitchCongestionSetting, 0);
    mad::EncodeSwitchSetting(target.sw, CcData(q.mad));
    sets.push_back(q);
    for (int b = 0; b * kPortsPerBlock <= c.num_ports; ++b) {
      MadRequest p = Cc(c, method::kSet, attr::kSwitchPortCongestionSetting, b);
      for (int i = 0; i < kPortsPerBlock && b * kPortsPerBlock + i <= c.num_ports; ++i)
        mad::EncodePortElement(
            policy_.PortFor(c.name, c.guid, b * kPortsPerBlock + i),
            CcData(p.mad) + i * mad::switch_port_congestion_setting::kElementBytes);
      sets.push_back(p);
    }
  } else {
    // The table before the setting: a CCTI_Min beyond the CCA's current CCTI_Limit is refused.
    uint16_t limit = static_cast<uint16_t>(target.cct.empty() ? 0 : target.cct.size() - 1);
    for (int b = 0; b < CctBlocks(target.cct.size()); ++b) {
      MadRequest q = Cc(c, method::kSet, attr::kCongestionControlTable, b);
      mad::EncodeCctBlock(limit, target.cct.data(), target.cct.size(), b, CcData(q.mad));
      sets.push_back(q);
    }
    MadRequest q = Cc(c, method::kSet, attr::kCaCongestionSetting, 0);
    mad::EncodeCaSetting(target.ca, CcData(q.mad));
    sets.push_back(q);
  }
  std::vector<MadReply> r = Run(sets);
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::string p = Problem(sets[i], r[i]); !p.empty()) {
      c.state = r[i].answered ? "refused" : "no answer";
      c.detail = p;
      log_(c.name + ": " + p);
      return false;
    }
  }
  // Verify: every Set's attribute read back must hold what was sent.
  std::vector<MadRequest> gets = sets;
  for (MadRequest& q : gets) {
    mad::Set(q.mad.data(), mad::hdr::kMethod, method::kGet);
    std::fill(q.mad.begin() + mad::kGsDataOffset, q.mad.end(), 0);
  }
  r = Run(gets);
  std::string mismatch;
  for (size_t i = 0; i < r.size() && mismatch.empty(); ++i) {
    if (std::string p = Problem(gets[i], r[i]); !p.empty()) {
      mismatch = p;
      break;
    }
    const uint8_t* got = CcData(r[i].mad);
    const uint8_t* want = CcData(sets[i].mad);
    mad::MadView v{sets[i].mad.data()};
    bool same = true;
    switch (v.attr_id()) {
      case attr::kCongestionKeyInfo:
        same =
            mad::Get(got, mad::congestion_key_info::kCcKey) == policy_.cc_key &&
            mad::Get(got, mad::congestion_key_info::kCcKeyProtectBit) == policy_.key_protect &&
            mad::Get(got, mad::congestion_key_info::kCcKeyLeasePeriod) == policy_.key_lease_period;
        break;
      case attr::kSwitchCongestionSetting:
        same = mad::DecodeSwitchSetting(got).SameAs(target.sw, target.sw.control_map);
        break;
      case attr::kClassPortInfo:
        same = mad::Get(got, mad::class_port_info::kTrapLid) == own_lid_ &&
               mad::Get(got, mad::class_port_info::kTrapQp) == 1;
        break;
      case attr::kCaCongestionSetting:
        same = mad::DecodeCaSetting(got).SameAs(target.ca, target.ca.control_map);
        break;
      default:  // port elements and CCT blocks: every byte as sent
        same = std::equal(got, got + mad::kGsDataBytes, want);
    }
    if (!same) mismatch = std::string(AttrName(v.attr_id())) + " reads back otherwise";
  }
  if (!mismatch.empty()) {
    c.state = "mismatch";
    c.detail = mismatch;
    log_(c.name + ": " + mismatch);
    return false;
  }
  c.state = "verified";
  c.detail.clear();
  return true;
}

void CcManager::ReadKeys() {
  std::vector<MadRequest> q;
  std::vector<Cca*> who;
  for (auto& [key, c] : ccas_) {
    if (c.state == "gone") continue;
    q.push_back(Cc(c, method::kGet, attr::kCongestionKeyInfo, 0));
    who.push_back(&c);
  }
  std::vector<MadReply> r = Run(q);
  uint64_t total = 0;
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].ok()) continue;
    auto v = static_cast<uint16_t>(
        mad::Get(CcData(r[i].mad), mad::congestion_key_info::kCcKeyViolations));
    if (v > who[i]->key_violations)
      log_("CC_Key violations at " + who[i]->name + ": " + std::to_string(v) +
           " (MADs with a wrong CC_Key were refused)");
    who[i]->key_violations = v;
    total += v;
  }
  key_violations_ = total;
}

int CcManager::PortOf(const Cca& sw, uint16_t dlid) {
  int block = dlid / 64;
  auto& blocks = lft_[sw.guid];
  auto it = blocks.find(block);
  if (it == blocks.end()) {
    fabricmgr::Smp s;
    s.lid = sw.lid;
    s.attr = attr::kLinearForwardingTable;
    s.mod = static_cast<uint32_t>(block);
    fabricmgr::SmpReply r = client_.Transact(s);
    if (!r.ok()) return -1;
    std::array<uint8_t, 64> ports{};
    std::copy(r.data.begin(), r.data.end(), ports.begin());
    it = blocks.emplace(block, ports).first;
  }
  uint8_t p = it->second[dlid % 64];
  return p == 0xFF ? -1 : p;
}

void CcManager::PollLogs() {
  std::vector<MadRequest> q;
  std::vector<Cca*> who;
  for (auto& [key, c] : ccas_) {
    if (c.state == "gone" || c.lid == 0) continue;
    q.push_back(Cc(c, method::kGet, attr::kCongestionLog, 0));
    who.push_back(&c);
  }
  std::vector<MadReply> r = Run(q);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].ok()) continue;
    Cca& c = *who[i];
    CongestionLogRead log = DecodeCongestionLog(r[i].mad);
    // The counter runs on while the log keeps only the newest entries: the difference is how
    // many events there were; the entries are a sample of them.
    size_t n = log.entries.size();
    uint32_t counted = c.have_log ? static_cast<uint16_t>(log.counter - c.log_counter) : n;
    double t0 =
        (c.have_log ? c.log_now : (n ? log.entries.back().timestamp : log.now)) * kCcTickSeconds;
    double t1 = log.now * kCcTickSeconds;
    c.have_log = true;
    c.log_counter = log.counter;
    c.log_now = log.now;
    c.events += counted;
    std::map<int, double> per_port;
    for (auto e = log.entries.rbegin(); e != log.entries.rend(); ++e) {  // oldest first
      Event ev;
      ev.set_time_s(e->timestamp * kCcTickSeconds);
      ev.set_node(c.name);
      ev.set_sl(e->sl);
      if (c.is_switch) {
        int port = PortOf(c, e->dlid);
        ev.set_port(port);
        ev.set_kind("mark");
        ev.set_slid(e->slid);
        ev.set_dlid(e->dlid);
        per_port[port] += 1;
      } else {
        ev.set_port(c.port);
        ev.set_kind("threshold");
        ev.set_slid(e->remote_lid);
        ev.set_local_qp(e->local_qp);
        ev.set_remote_qp(e->remote_qp);
      }
      record_.Add(std::move(ev));
    }
    if (!c.is_switch) continue;
    double scale = n > 0 ? static_cast<double>(counted) / n : 0;
    for (auto& [port, k] : per_port) c.marking_ports.insert(port);
    for (int port : c.marking_ports)
      record_.AddMarking(c.name, port, t0, t1, per_port[port] * scale);
  }
}

void CcManager::OnUnsolicited(const fabricmgr::ReceivedMad& r) {
  mad::MadBuffer m = r.mad;
  mad::MadView v{m.data()};
  char line[256];
  if (v.mgmt_class() != mad::mgmt_class::kCongestion || v.method() != method::kTrap ||
      v.attr_id() != attr::kNotice) {
    std::snprintf(line, sizeof line,
                  "unsolicited MAD from LID %u: class 0x%02x method 0x%02x "
                  "attribute 0x%04x, ignored",
                  r.slid, v.mgmt_class(), v.method(), v.attr_id());
    log_(line);
    return;
  }
  // Repress it, as the trap's receiver does: the same MAD back, method TrapRepress.
  v.set_method(method::kTrapRepress);
  v.set_status(0);
  client_.port().Send(m, r.slid, 0, 0);
  const uint8_t* n = CcData(m);
  uint16_t issuer = static_cast<uint16_t>(mad::Get(n, mad::notice::kIssuerLid));
  uint16_t trap = static_cast<uint16_t>(mad::Get(n, mad::notice::kTrapNumber));
  std::string who = "LID " + std::to_string(issuer);
  for (auto& [key, c] : ccas_)
    if (c.lid == issuer && c.state != "gone") {
      who = c.name + (c.is_switch ? "" : " port " + std::to_string(c.port));
      ++c.traps;
    }
  ++traps_;
  if (trap != mad::cc_notice::kTrapBadCcKey) {
    log_("trap " + std::to_string(trap) + " from " + who);
    return;
  }
  std::snprintf(line, sizeof line,
                "Bad CC_Key trap from %s: LID %u QP %u tried method 0x%02x on attribute 0x%04x "
                "(modifier %u) with CC_Key 0x%llx",
                who.c_str(), static_cast<unsigned>(mad::Get(n, mad::cc_notice::kSlid)),
                static_cast<unsigned>(mad::Get(n, mad::cc_notice::kQp)),
                static_cast<unsigned>(mad::Get(n, mad::cc_notice::kMethod)),
                static_cast<unsigned>(mad::Get(n, mad::cc_notice::kAttrId)),
                static_cast<unsigned>(mad::Get(n, mad::cc_notice::kAttrMod)),
                static_cast<unsigned long long>(mad::Get(n, mad::cc_notice::kCcKey)));
  log_(line);
}

std::vector<Cca*> CcManager::Match(const std::string& node, int port, std::string* error) {
  std::vector<Cca*> out;
  for (auto& [key, c] : ccas_) {
    char guid[24];
    std::snprintf(guid, sizeof guid, "0x%016llx", static_cast<unsigned long long>(c.guid));
    bool named = node.empty() || c.name == node || guid == node;
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
  s.set_state(c.state);
  s.set_detail(c.detail);
  s.set_programmed(c.programmed);
  s.set_events(c.events);
  s.set_cc_key_violations(c.key_violations);
  s.set_traps(c.traps);
  return s;
}

bool CcManager::ReadBack(const Cca& c, NodeState* s, std::string* error) {
  std::vector<MadRequest> q = {Cc(c, method::kGet, attr::kCongestionKeyInfo, 0)};
  if (c.is_switch) {
    q.push_back(Cc(c, method::kGet, attr::kSwitchCongestionSetting, 0));
    for (int b = 0; b * kPortsPerBlock <= c.num_ports; ++b)
      q.push_back(Cc(c, method::kGet, attr::kSwitchPortCongestionSetting, b));
  } else {
    q.push_back(Cc(c, method::kGet, attr::kCaCongestionSetting, 0));
    q.push_back(Cc(c, method::kGet, attr::kCongestionControlTable, 0));
    q.push_back(Cc(c, method::kGet, attr::kCongestionControlTable, 1));
  }
  q.push_back(Cc(c, method::kGet, attr::kClassPortInfo, 0));
  std::vector<MadReply> r = Run(q);
  for (size_t i = 0; i < r.size(); ++i)
    if (std::string p = Problem(q[i], r[i]); !p.empty()) {
      *error = c.name + ": " + p;
      return false;
    }
  s->set_read_back(true);
  s->set_trap_lid(
      static_cast<uint32_t>(mad::Get(CcData(r.back().mad), mad::class_port_info::kTrapLid)));
  r.pop_back();
  {
    using namespace mad::congestion_key_info;
    const uint8_t* d = CcData(r[0].mad);
    s->set_cc_key(mad::Get(d, kCcKey));
    s->set_cc_key_protect(mad::Get(d, kCcKeyProtectBit) != 0);
    s->set_cc_key_lease_period(static_cast<uint32_t>(mad::Get(d, kCcKeyLeasePeriod)));
    s->set_cc_key_violations(static_cast<uint32_t>(mad::Get(d, kCcKeyViolations)));
  }
  if (c.is_switch) {
    mad::SwitchCongestionSetting w = mad::DecodeSwitchSetting(CcData(r[1].mad));
    s->set_control_map(w.control_map);
    s->set_victim_mask(MaskHex(w.victim_mask));
    s->set_credit_mask(MaskHex(w.credit_mask));
    s->set_threshold(w.threshold);
    s->set_packet_size(w.packet_size);
    s->set_cs_threshold(w.cs_threshold);
    s->set_cs_return_delay(w.cs_return_delay);
    s->set_marking_rate(w.marking_rate);
    for (size_t i = 2; i < r.size(); ++i)
      for (int k = 0; k < kPortsPerBlock; ++k) {
        int port = static_cast<int>(i - 2) * kPortsPerBlock + k;
        if (port > c.num_ports) break;
        mad::SwitchPortCongestionSetting e = mad::DecodePortElement(
            CcData(r[i].mad) + k * mad::switch_port_congestion_setting::kElementBytes);
        PortSetting* p = s->add_ports();
        p->set_port(port);
        p->set_valid(e.valid);
        p->set_control_type(e.control_type);
        p->set_threshold(e.threshold);
        p->set_packet_size(e.packet_size);
        p->set_marking_rate(e.marking_rate);
      }
    return true;
  }
  mad::CaCongestionSetting ca = mad::DecodeCaSetting(CcData(r[1].mad));
  s->set_port_control(ca.port_control);
  s->set_ca_control_map(ca.control_map);
  for (int sl = 0; sl < 16; ++sl) {
    if (!(ca.control_map >> sl & 1)) continue;
    SlEntry* e = s->add_sl();
    e->set_sl(sl);
    e->set_ccti_timer(ca.sl[sl].ccti_timer);
    e->set_ccti_increase(ca.sl[sl].ccti_increase);
    e->set_trigger_threshold(ca.sl[sl].trigger_threshold);
    e->set_ccti_min(ca.sl[sl].ccti_min);
  }
  uint16_t entries[2 * kCctPerBlock];
  uint16_t limit = mad::DecodeCctBlock(CcData(r[2].mad), entries);
  mad::DecodeCctBlock(CcData(r[3].mad), entries + kCctPerBlock);
  s->set_ccti_limit(limit);
  for (int i = 0; i <= limit && i < 2 * kCctPerBlock; ++i) s->add_cct(entries[i]);
  return true;
}

Status CcManager::MakeStatus() const {
  Status s;
  s.set_policy(policy_.file.empty() ? "(defaults)" : policy_.file);
  uint32_t verified = 0, failed = 0, live = 0;
  uint64_t counted = 0;
  for (const auto& [key, c] : ccas_) {
    counted += c.events;
    if (c.state == "gone") continue;
    ++live;
    if (c.state == "verified")
      ++verified;
    else if (c.state != "pending")
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
        if (c.state == "gone") continue;
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
        if (c->state != "gone" && !ReadBack(*c, &n, &error)) {
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
          if (c.state != "gone") m.push_back(&c);
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
