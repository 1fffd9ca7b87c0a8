// The CC_Key side: violations read from every CCA, and the Bad CC_Key traps they send.
#include <cstdio>

#include "cc-manager/cc_manager.h"
#include "common/mad/smp_attributes.h"

namespace ibemu::ccmgr {

void CcManager::ReadKeys() {
  std::vector<MadRequest> q;
  std::vector<Cca*> who;
  for (auto& [key, c] : ccas_) {
    if (c.state != CcaState::kVerified) continue;  // as PollLogs: not where the key is refused
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
    if (c.lid == issuer && !c.gone()) {
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

}  // namespace ibemu::ccmgr
