// The emulated HCA this process stands behind: which topology node (IBEMU_VERBS_HCA, else the
// node of IBEMU_UMAD_PORT, as `ibemu exec --hca` sets both), the connection to the fabric it
// shares with nothing else in the process, and its description fresh from the fabric, so LIDs
// an SM assigns show at the next query as they do through sysfs on a real host.
#pragma once
#include <atomic>
#include <mutex>
#include <optional>
#include <string>

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

 private:
  Hca();
  void Hint(const std::string& why);

  // hostclient::LinkListener: nothing to do yet beyond answering Calls.
  void OnFabricMessage(const umad::FromFabric&) override {}
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
  std::mutex mu_;
  hostclient::FabricLink link_{this};
  std::atomic<bool> hinted_{false};
};

}  // namespace ibemu::verbs
