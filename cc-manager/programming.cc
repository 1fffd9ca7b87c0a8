// Programming a CCA from the policy with Sets, verifying it with Gets, and reading it back for
// `show`.
#include <algorithm>

#include "cc-manager/cc_manager.h"

namespace ibemu::ccmgr {
namespace {

int CctBlocks(size_t entries) {
  return std::max<int>(1, static_cast<int>((entries + kCctPerBlock - 1) / kCctPerBlock));
}

}  // namespace

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
    // Any value but 0 leaves the CCA's count as it is (0 would clear it, and lose violations
    // made since the manager last read them).
    mad::Set(CcData(q.mad), kCcKeyViolations, 1);
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
  // A CA's setting goes only once its table has been taken: the Sets in flight together may
  // arrive in any order, and a CCTI_Min beyond the CCA's CCTI_Limit is refused.
  std::vector<MadReply> r;
  if (c.is_switch) {
    r = Run(sets);
  } else {
    std::vector<MadRequest> table(sets.begin(), sets.end() - 1);
    r = Run(table);
    bool taken = std::all_of(r.begin(), r.end(), [](const MadReply& x) { return x.ok(); });
    if (taken) r.push_back(Run({sets.back()}).front());
  }
  for (size_t i = 0; i < r.size(); ++i) {
    if (std::string p = CcReplyProblem(sets[i].mad, r[i].answered, r[i].status); !p.empty()) {
      c.state = r[i].answered ? CcaState::kRefused : CcaState::kNoAnswer;
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
    if (std::string p = CcReplyProblem(gets[i].mad, r[i].answered, r[i].status); !p.empty()) {
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
    if (!same) mismatch = std::string(CcAttributeName(v.attr_id())) + " reads back otherwise";
  }
  if (!mismatch.empty()) {
    c.state = CcaState::kMismatch;
    c.detail = mismatch;
    log_(c.name + ": " + mismatch);
    return false;
  }
  c.state = CcaState::kVerified;
  c.detail.clear();
  return true;
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
  }
  q.push_back(Cc(c, method::kGet, attr::kClassPortInfo, 0));
  std::vector<MadReply> r = Run(q);
  for (size_t i = 0; i < r.size(); ++i)
    if (std::string p = CcReplyProblem(q[i].mad, r[i].answered, r[i].status); !p.empty()) {
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
    s->set_victim_mask(PortMaskHex(w.victim_mask));
    s->set_credit_mask(PortMaskHex(w.credit_mask));
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
  // Block 0 says CCTI_Limit; the blocks after it are read only as far as the table goes, so a
  // CA with fewer blocks (ControlTableCap) is read too.
  std::vector<uint16_t> entries(kCctPerBlock);
  uint16_t limit = mad::DecodeCctBlock(CcData(r[2].mad), entries.data());
  for (int b = 1; b * kCctPerBlock <= limit; ++b) {
    MadRequest more = Cc(c, method::kGet, attr::kCongestionControlTable, b);
    MadReply got = Run({more}).front();
    if (std::string p = CcReplyProblem(more.mad, got.answered, got.status); !p.empty()) {
      *error = c.name + ": " + p;
      return false;
    }
    entries.resize(entries.size() + kCctPerBlock);
    mad::DecodeCctBlock(CcData(got.mad), entries.data() + b * kCctPerBlock);
  }
  s->set_ccti_limit(limit);
  for (size_t i = 0; i <= limit && i < entries.size(); ++i) s->add_cct(entries[i]);
  return true;
}

}  // namespace ibemu::ccmgr
