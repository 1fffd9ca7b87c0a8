// The emulated HCA this process stands behind: which topology node (IBEMU_VERBS_HCA, else the
// node of IBEMU_UMAD_PORT, as `ibemu exec --hca` sets both), the connection to the fabric it
// shares with nothing else in the process, its description fresh from the fabric (so LIDs an SM
// assigns show at the next query, as they do through sysfs on a real host), and the verbs
// session: requests to the HCA, and completions from it handed to whoever registered the QP.
#pragma once
#include <infiniband/verbs.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "hostlib/client/fabric_address.h"
#include "hostlib/client/fabric_link.h"
#include "umad.pb.h"

namespace ibemu::verbs {

class Hca final : public hostclient::LinkListener {
 public:
  static Hca& Get();

  // The node's description, or nothing (then one line on stderr, once per process, says why and
  // what to run).
  std::optional<umad::CaAttributes> Describe();
  const std::string& node() const { return node_; }
  // Where the fabric is (run directory, fabric name), from the environment at load.
  const hostclient::FabricAddress& where() const { return where_; }

  // A verbs request the HCA answers (Open, RegMr, CreateQp, ...): the reply, or one with
  // status ENODEV when the fabric is not there. Opens the session first if needed.
  umad::VerbsReply Request(umad::VerbsRequest req);
  // PostSend and PostRecv: no reply; the HCA answers with completions.
  void Post(umad::VerbsRequest req);

  // Takes in what the fabric has sent, on the calling thread (FabricLink::TryReceive): how many
  // messages, or -1 when another thread is at it. Call with no CQ or QP lock held.
  int Progress() { return link_.TryReceive(); }
  // Readable when Progress may find something (FabricLink::receive_fd), or -1.
  int progress_fd() const { return link_.receive_fd(); }

  // Where the completions of a QP go, called on the I/O thread or in Progress.
  using CompletionSink = std::function<void(const umad::Completion&)>;
  void SetSink(uint32_t qpn, CompletionSink sink);
  void ClearSink(uint32_t qpn);
  // Where an SRQ's asynchronous events go (null: forget it).
  void SetSrq(uint32_t srqn, ibv_srq* srq);

 private:
  Hca();
  void Hint(const std::string& why);

  uint32_t OpenSession();  // 0 when the fabric refuses or is not there

  // hostclient::LinkListener: completions go to the sinks.
  void OnFabricMessage(const umad::FromFabric& msg) override;
  void OnReconnected() override {}
  std::optional<std::chrono::steady_clock::time_point> NextDeadline() override {
    return std::nullopt;
  }
  void OnTimers(std::chrono::steady_clock::time_point) override {}
  int ExtraFd() override { return -1; }
  void OnExtraFd() override {}

  hostclient::FabricAddress where_;
  std::string node_;
  std::string variable_;  // which setting named the node, for messages
  std::string no_node_;   // why IBEMU_HCA_MAP gives this process no node
  std::mutex mu_;
  hostclient::FabricLink link_{this};
  std::atomic<bool> hinted_{false};
  std::mutex session_mu_;
  uint32_t session_ = 0;
  std::mutex sinks_mu_;
  std::unordered_map<uint32_t, CompletionSink> sinks_;
  std::unordered_map<uint32_t, ibv_srq*> srqs_;  // under sinks_mu_
};

}  // namespace ibemu::verbs
