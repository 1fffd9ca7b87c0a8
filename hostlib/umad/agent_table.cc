#include "hostlib/umad/agent_table.h"

#include "common/mad/mad_header.h"

namespace ibemu::umad {

std::optional<uint32_t> AgentTable::Add(const AgentRequest& req, uint32_t hi_tid) {
  for (uint32_t id = 0; id < kMaxAgents; ++id) {
    if (slots_[id]) continue;
    slots_[id] = Agent{id, hi_tid, mad::QpnForClass(req.mgmt_class), req};
    return id;
  }
  return std::nullopt;
}

bool AgentTable::Remove(uint32_t id) {
  if (id >= kMaxAgents || !slots_[id]) return false;
  slots_[id].reset();
  return true;
}

const Agent* AgentTable::Find(uint32_t id) const {
  return id < kMaxAgents && slots_[id] ? &*slots_[id] : nullptr;
}

const Agent* AgentTable::ForRequest(uint8_t mgmt_class, uint8_t class_version, uint8_t method,
                                    uint32_t oui) const {
  for (const auto& a : slots_) {
    if (!a || a->req.mgmt_class == 0) continue;
    if (a->req.mgmt_class != mgmt_class || a->req.class_version != class_version) continue;
    if (mad::IsVendorRange2(mgmt_class) && a->req.oui != oui) continue;
    if (a->req.HasMethod(method)) return &*a;
  }
  return nullptr;
}

const Agent* AgentTable::ForHiTid(uint32_t hi_tid) const {
  for (const auto& a : slots_)
    if (a && a->hi_tid == hi_tid) return &*a;
  return nullptr;
}

bool AgentTable::Conflicts(const AgentRequest& req) const {
  if (!req.AnyMethod()) return false;
  for (const auto& a : slots_) {
    if (!a || a->req.mgmt_class != req.mgmt_class) continue;
    if (a->req.class_version != req.class_version) continue;
    if (mad::IsVendorRange2(req.mgmt_class) && a->req.oui != req.oui) continue;
    if ((a->req.method_mask[0] & req.method_mask[0]) ||
        (a->req.method_mask[1] & req.method_mask[1]))
      return true;
  }
  return false;
}

std::vector<uint32_t> AgentTable::Ids() const {
  std::vector<uint32_t> ids;
  for (const auto& a : slots_)
    if (a) ids.push_back(a->id);
  return ids;
}

}  // namespace ibemu::umad
