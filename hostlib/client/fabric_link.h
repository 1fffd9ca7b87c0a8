// A host library's one connection to the fabric: a ZeroMQ DEALER to the ROUTER of `ibemu up`
// (common/transport/umad.proto). Application threads send on it themselves, one at a time under
// a mutex (ZeroMQ sockets are not thread-safe, and OpenSM sends from its sweeper threads while
// its receiver thread blocks in umad_recv): a verbs doorbell reaches the fabric without waking
// another thread first, and one socket keeps every message in the order it was sent. An I/O
// thread receives, waiting on the socket's file descriptor rather than in zmq_poll so that it
// holds the socket only while reading, and a thread polling for completions may receive first
// (TryReceive). The I/O thread also drives the listener's timers, so request timeouts fire even
// when the fabric is silent or gone.
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
#include <vector>

#include "common/transport/mad_frame_proto.h"
#include "umad.pb.h"

namespace ibemu::hostclient {

using umad::FromFabric;
using umad::ToFabric;

// What the link calls back into: one call at a time, under the link's dispatch lock, on the I/O
// thread or on an application thread in TryReceive.
class LinkListener {
 public:
  virtual ~LinkListener() = default;
  // A message that is not the reply to a pending Call (Receive, mostly).
  virtual void OnFabricMessage(const FromFabric& msg) = 0;
  // A MAD that came as a frame (common/transport/mad_frame.h) rather than a Receive. By default
  // it is made into a Receive for OnFabricMessage.
  virtual void OnFabricMad(const transport::MadFrameHeader& h, const uint8_t* mad, size_t len);
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

  // Connects (asynchronously: ZeroMQ keeps retrying) and starts the I/O thread. With a
  // `direct_path` that a fabric listens at (and IBEMU_LINK not "zmq"), the link is that Unix
  // SOCK_SEQPACKET socket instead (emulator/fabric/local_channel.h): sends go from the calling
  // thread straight to the fabric's service loop, and replies straight to the I/O thread, with
  // no ZeroMQ I/O thread on either side. A lost connection is tried again every 100 ms.
  bool Start(const std::string& endpoint, const std::string& direct_path = "");
  void Stop();
  bool started() const { return started_; }

  // Sends a message without blocking: what the link cannot take now is queued in order (ZeroMQ's
  // queue, or this link's own on the direct socket). When there is no fabric to take it, it is
  // dropped, like a MAD lost on the wire.
  void Post(const ToFabric& msg);
  // Sends a MAD as a frame (a Send, without building one): the same as Post otherwise.
  void PostMad(const transport::MadFrameHeader& h, const void* mad, size_t len);
  // PostMad in two halves, for a caller that finishes the frame under its own lock and sends it
  // after letting go of it: the frame in the calling thread's buffer (kept from one frame to the
  // next), and that buffer sent.
  static std::string& EncodeMad(const transport::MadFrameHeader& h, const void* mad, size_t len);
  void PostEncoded(const std::string& frame) { PostBytes(frame); }
  // Sends a request that the fabric answers (Query, Attach) and waits for the reply.
  std::optional<FromFabric> Call(ToFabric msg, std::chrono::milliseconds timeout);
  // Receives and handles what has arrived on the calling thread: how many messages, or -1 when
  // another thread is at it. A thread polling for completions gets them without waiting for the
  // I/O thread to be scheduled. The caller must hold no lock a listener takes. On the direct
  // socket, at most `max` messages (the rest stay readable there); on the ZeroMQ socket, whose
  // descriptor is an edge, all of them.
  int TryReceive(size_t max = SIZE_MAX);
  // Returns when the thread that held the receiving side when TryReceive returned -1 (the I/O
  // thread, or another receiver) has let go of it. The caller must hold no lock a listener takes.
  void AwaitReceiver() { std::lock_guard lock(dispatch_mu_); }
  // Readable (edge-triggered, as ZMQ_FD is) when something may have arrived: for a thread that
  // blocks waiting for what TryReceive would bring. -1 before Start, and on the direct socket.
  int receive_fd() const { return dealer_fd_; }
  // Re-evaluate timers and the extra fd now.
  void Wake();

  // On the direct socket, a thread about to block until messages come (umad_recv) may watch the
  // socket itself and take them in with TryReceive: a reply then wakes that thread alone, not
  // the I/O thread first. BeginReceiving returns the descriptor to poll, or -1 (not direct, or
  // the connection is lost), and EndReceiving is given what it returned. While any thread
  // receives, and for kReceiverCheck after the last one stopped, the I/O thread leaves the socket
  // alone, and looks every kReceiverCheck whether that still holds: a message that arrives just
  // after the last receiver stopped waits about twice that long for a thread that only polls
  // the umad file descriptor. A socket the fabric hung up on stays open (and readable) while any
  // receiver is counted, so a receiver polling it wakes, and is then given -1 (or the new
  // socket): it is no longer counted, and the I/O thread takes over.
  int BeginReceiving();
  // Only a thread about to block counts: one that only looks (timeout 0) reads the socket
  // without polling it, so a program that polls the umad descriptor and drains with such calls
  // keeps the I/O thread on the socket.
  void EndReceiving(int fd) {
    if (fd < 0) return;
    last_receiving_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                          std::memory_order_relaxed);
    --receivers_;
  }
  static constexpr std::chrono::milliseconds kReceiverCheck{10};

  // False after a Call went unanswered, until the fabric is heard from again.
  bool responsive() const { return responsive_; }

 private:
  void Run();
  void StartIoThread(void (FabricLink::*run)());
  bool Readable();   // under socket_mu_
  int ReceiveAll();  // under dispatch_mu_; how many messages
  // One message: the reply a Call waits for, or the listener's. Under dispatch_mu_.
  void Dispatch(const void* data, size_t size);

  void ReadMonitor();
  // The direct socket: connected, or -1; and the I/O thread's side of it.
  static int ConnectDirect(const std::string& path);
  bool StartDirect(const std::string& path);
  void RunDirect();
  int ReceiveAllDirect(size_t max = SIZE_MAX);
  void DropDirect();  // under dispatch_mu_: the fabric hung up (the socket is retired)
  // Post's and PostMad's common part: `bytes` is the calling thread's buffer (Scratch).
  void PostBytes(const std::string& bytes);
  static std::string& Scratch();
  // Under socket_mu_: sends one message on the direct socket unless it would block (false).
  bool SendNow(const std::string& bytes);
  void FlushOutbox();   // the I/O thread, when the socket has room
  void CloseRetired();  // under socket_mu_

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

  std::mutex dispatch_mu_;  // the listener's calls, and receiving
  std::mutex socket_mu_;    // dealer_
  int dealer_fd_ = -1;      // signals, edge-triggered, that dealer_ may have changed state

  bool direct_ = false;      // set at Start: the link is the SOCK_SEQPACKET socket
  std::string direct_path_;  // where it connects
  int direct_fd_ = -1;       // under socket_mu_; -1 when lost
  // Under socket_mu_: hung-up sockets, closed once no receiver is counted; and what waits for
  // room on the live one.
  std::vector<int> retired_;
  std::deque<std::string> outbox_;
  std::string buf_;  // receive buffer, under dispatch_mu_
  std::atomic<int> receivers_{0};
  // When a receiver last stopped (steady_clock ticks). An SM's receiving thread is out of
  // umad_recv between two answers, handing the last one on; the I/O thread that took the socket
  // back in that gap woke for the next answer too and handed it over through the umad file's
  // eventfd: a third of OpenSM's answers went that way, two thread wake-ups each instead of one.
  // So the socket counts as watched for kReceiverCheck after a receiver stops.
  std::atomic<std::chrono::steady_clock::rep> last_receiving_{0};

  std::mutex rpc_mu_;
  std::condition_variable rpc_cv_;
  uint64_t next_request_ = 1;
  std::map<uint64_t, std::optional<FromFabric>> rpc_;
};

}  // namespace ibemu::hostclient
