// A host library's one connection to the fabric: a ZeroMQ DEALER to the ROUTER of `ibemu up`
// (common/transport/umad.proto), owned by one I/O thread because ZeroMQ sockets are not
// thread-safe while the umad API is called from many threads at once (OpenSM sends from its
// sweeper threads while its receiver thread blocks in umad_recv). Application threads hand
// messages over through a queue; the I/O thread also drives the listener's timers, so request
// timeouts fire even when the fabric is silent or gone.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "umad.pb.h"

namespace ibemu::hostclient {

using umad::FromFabric;
using umad::ToFabric;

// What the I/O thread calls back into. Called on the I/O thread only.
class LinkListener {
 public:
  virtual ~LinkListener() = default;
  // A message that is not the reply to a pending Call (Receive, mostly).
  virtual void OnFabricMessage(const FromFabric& msg) = 0;
  // The connection came back after a loss: the fabric no longer knows our attachments.
  virtual void OnReconnected() = 0;
  // The earliest timer, and the timers' expiry.
  virtual std::optional<std::chrono::steady_clock::time_point> NextDeadline() = 0;
  virtual void OnTimers(std::chrono::steady_clock::time_point now) = 0;
  // One more file descriptor to watch (the issm inotify fd), or -1.
  virtual int ExtraFd() = 0;
  virtual void OnExtraFd() = 0;
};

class FabricLink {
 public:
  explicit FabricLink(LinkListener* listener) : listener_(listener) {}
  ~FabricLink() { Stop(); }
  FabricLink(const FabricLink&) = delete;
  FabricLink& operator=(const FabricLink&) = delete;

  // Connects (asynchronously: ZeroMQ keeps retrying) and starts the I/O thread.
  bool Start(const std::string& endpoint);
  void Stop();
  bool started() const { return started_; }

  // Queues a message; the I/O thread sends it without blocking. When the fabric cannot take it
  // (no peer, queue full) it is dropped, like a MAD lost on the wire.
  void Post(const ToFabric& msg);
  // Sends a request that the fabric answers (Query, Attach) and waits for the reply.
  std::optional<FromFabric> Call(ToFabric msg, std::chrono::milliseconds timeout);
  // Re-evaluate timers and the extra fd now.
  void Wake();

  // False after a Call went unanswered, until the fabric is heard from again.
  bool responsive() const { return responsive_; }

 private:
  void Run();
  void SendQueued();
  void ReceiveAll();
  void ReadMonitor();

  LinkListener* listener_;
  void* ctx_ = nullptr;
  void* dealer_ = nullptr;
  void* monitor_ = nullptr;
  int wake_fd_ = -1;
  std::thread thread_;
  bool started_ = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> responsive_{true};
  int connects_ = 0;  // I/O thread only

  std::mutex out_mu_;
  std::deque<std::string> out_;

  std::mutex rpc_mu_;
  std::condition_variable rpc_cv_;
  uint64_t next_request_ = 1;
  std::map<uint64_t, std::optional<FromFabric>> rpc_;
};

}  // namespace ibemu::hostclient
