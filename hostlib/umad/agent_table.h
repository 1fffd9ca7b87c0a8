// The MAD agents registered on one umad file (one umad_open_port): what the kernel's ib_umad keeps
// per file. An agent is a (management class, class version, method mask) registration; requests
// that arrive unsolicited go to the agent whose class, version and method bit match, responses to
// the agent whose hi_tid is in TID bits 63..32.
#pragma once
#include <infiniband/umad.h>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace ibemu::umad {

// What umad_register / umad_register_oui / umad_register2 ask for.
struct AgentRequest {
  uint8_t mgmt_class = 0;                 // 0: a send-only agent that receives only its responses
  uint8_t class_version = 0;              // 1..7
  uint8_t rmpp_version = 0;               // 0 or 1
  uint32_t flags = 0;                     // UMAD_USER_RMPP
  uint32_t oui = 0;                       // vendor range 2 only
  std::array<uint64_t, 2> method_mask{};  // bit n: method n is handled when unsolicited

  bool HasMethod(uint8_t m) const { return (method_mask[m >> 6] >> (m & 63)) & 1; }
  bool AnyMethod() const { return method_mask[0] != 0 || method_mask[1] != 0; }
};

struct Agent {
  uint32_t id = 0;      // the per-file agent id returned to the application
  uint32_t hi_tid = 0;  // stamped into TID bits 63..32 of this agent's requests
  uint8_t qpn = 0;      // 0 for the SM classes, 1 otherwise
  AgentRequest req;

  // ib_mad_kernel_rmpp_agent(): RMPP (segmentation, reassembly, ACKs) is done for the
  // application, unless it registered with UMAD_USER_RMPP to do it itself.
  bool KernelRmpp() const { return req.rmpp_version != 0 && !(req.flags & UMAD_USER_RMPP); }
};

class AgentTable {
 public:
  // IB_UMAD_MAX_AGENTS: the kernel hands out ids 0..31 per file, lowest free first; OpenSM
  // indexes an array of 32 with them.
  static constexpr uint32_t kMaxAgents = 32;

  // Returns the new agent id, or nullopt when all ids are taken.
  std::optional<uint32_t> Add(const AgentRequest& req, uint32_t hi_tid);
  bool Remove(uint32_t id);
  const Agent* Find(uint32_t id) const;

  // The agent an unsolicited request goes to: same class and class version, the method's bit
  // in its mask and, for vendor range 2, the same OUI.
  const Agent* ForRequest(uint8_t mgmt_class, uint8_t class_version, uint8_t method,
                          uint32_t oui) const;
  // The agent that owns a response: hi_tid equal to TID bits 63..32.
  const Agent* ForHiTid(uint32_t hi_tid) const;
  // True when another agent here already takes one of `req`'s methods for the same class,
  // version (and OUI): the kernel refuses such a registration (method_in_use()).
  bool Conflicts(const AgentRequest& req) const;

  std::vector<uint32_t> Ids() const;

 private:
  std::array<std::optional<Agent>, kMaxAgents> slots_;
};

}  // namespace ibemu::umad
