#include "hostlib/client/fabric_link.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "hostlib/client/host_log.h"
#include "hostlib/client/no_cancel.h"

namespace ibemu::hostclient {

namespace {

// Application threads run libzmq now, with their signals and cancellation: a signal makes the
// poll(0) that ends libzmq's command processing fail with EINTR, which must not read as "sent",
// "nothing to read" or "drained", or a message or its wake-up is lost. And a thread cancelled
// inside libzmq, or between taking a message and handing it over, would leave the socket or a
// completion half-done, so cancellation waits until the section is over.
template <class F>
int RetryOnEintr(F call) {
  int rc;
  while ((rc = call()) < 0 && zmq_errno() == EINTR) {
  }
  return rc;
}

void* OpenSocket(void* ctx, int type) {
  void* s = zmq_socket(ctx, type);
  if (!s) return nullptr;
  int zero = 0;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  return s;
}

}  // namespace

// Must match LocalChannel::kMaxMessage on the fabric's side, plus one to see a longer message.
constexpr size_t kMaxDirectMessage = (size_t{64} << 10) + 1;
// A lost or restarted fabric is tried again this often (ZeroMQ's first reconnect interval).
constexpr auto kReconnectEvery = std::chrono::milliseconds(100);

int FabricLink::ConnectDirect(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return -1;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Non-blocking throughout: a fabric that has stopped reading (stopped, overloaded) must not
  // hold up a thread that holds the library's locks. A full backlog (EAGAIN) is tried again
  // like a fabric that is not there.
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  int rc;
  while ((rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr)) < 0 &&
         errno == EINTR) {
  }
  if (rc != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool FabricLink::StartDirect(const std::string& path) {
  int fd = ConnectDirect(path);
  if (fd < 0) return false;
  if ((wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    close(fd);
    return false;
  }
  direct_ = true;
  direct_path_ = path;
  direct_fd_ = fd;
  buf_.resize(kMaxDirectMessage);
  return true;
}

bool FabricLink::Start(const std::string& endpoint, const std::string& direct_path) {
  if (started_) return true;
  const char* choice = std::getenv("IBEMU_LINK");
  if (!direct_path.empty() && !(choice && std::strcmp(choice, "zmq") == 0) &&
      StartDirect(direct_path)) {
    StartIoThread(&FabricLink::RunDirect);
    return true;
  }
  ctx_ = zmq_ctx_new();
  if (!ctx_) return false;
  dealer_ = OpenSocket(ctx_, ZMQ_DEALER);
  // Never drop what the fabric sends us (MADs are queued here and in the umad files), nor what
  // we send it: a post that met the default high-water mark of 1000 messages while the fabric
  // was busy failed with EAGAIN and was lost (Post sends without waiting).
  int unlimited = 0;
  if (dealer_) zmq_setsockopt(dealer_, ZMQ_RCVHWM, &unlimited, sizeof unlimited);
  if (dealer_) zmq_setsockopt(dealer_, ZMQ_SNDHWM, &unlimited, sizeof unlimited);
  // A fabric that restarts is found again within a second.
  int reconnect_max_ms = 1000;
  if (dealer_) zmq_setsockopt(dealer_, ZMQ_RECONNECT_IVL_MAX, &reconnect_max_ms, sizeof(int));

  // The monitor tells the I/O thread when the connection is re-established: a restarted fabric
  // has forgotten our Attach, so it must be sent again.
  char monitor_ep[64];
  size_t fd_size = sizeof dealer_fd_;
  std::snprintf(monitor_ep, sizeof monitor_ep, "inproc://ibemu-umad-monitor-%p",
                static_cast<void*>(this));
  if (!dealer_ || zmq_socket_monitor(dealer_, monitor_ep, ZMQ_EVENT_CONNECTED) != 0 ||
      !(monitor_ = OpenSocket(ctx_, ZMQ_PAIR)) || zmq_connect(monitor_, monitor_ep) != 0 ||
      zmq_connect(dealer_, endpoint.c_str()) != 0 ||
      zmq_getsockopt(dealer_, ZMQ_FD, &dealer_fd_, &fd_size) != 0 ||
      (wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0) {
    Warn(__func__, "cannot connect to %s: %s", endpoint.c_str(), zmq_strerror(zmq_errno()));
    if (monitor_) zmq_close(monitor_);
    if (dealer_) zmq_close(dealer_);
    zmq_ctx_term(ctx_);
    monitor_ = dealer_ = ctx_ = nullptr;
    dealer_fd_ = -1;
    return false;
  }
  StartIoThread(&FabricLink::Run);
  return true;
}

void FabricLink::StartIoThread(void (FabricLink::*run)()) {
  stop_ = false;
  // The application's signals go to the application's threads, as if there were no extra thread
  // (OpenSM, for one, handles SIGINT/SIGTERM/SIGHUP itself).
  sigset_t all, saved;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &saved);
  thread_ = std::thread([this, run] { (this->*run)(); });
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  started_ = true;
}

void FabricLink::Stop() {
  if (!started_) return;
  stop_ = true;
  Wake();
  thread_.join();
  if (direct_) {
    // An application thread in TryReceive holds dispatch_mu_ while it reads the socket.
    std::lock_guard dispatch(dispatch_mu_);
    std::lock_guard lock(socket_mu_);
    if (direct_fd_ >= 0) close(direct_fd_);
    for (int fd : retired_) close(fd);
    retired_.clear();
    outbox_.clear();
    direct_fd_ = -1;
    close(wake_fd_);
    wake_fd_ = -1;
    started_ = false;
    return;
  }
  zmq_close(monitor_);
  {
    std::lock_guard lock(socket_mu_);
    zmq_close(dealer_);
    dealer_ = nullptr;
    dealer_fd_ = -1;
  }
  zmq_ctx_term(ctx_);
  close(wake_fd_);
  monitor_ = ctx_ = nullptr;
  wake_fd_ = -1;
  started_ = false;
}

void FabricLink::Wake() {
  if (wake_fd_ < 0) return;
  uint64_t one = 1;
  // A full counter (never in practice) already means "awake".
  [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof one);
}

void LinkListener::OnFabricMad(const transport::MadFrameHeader& h, const uint8_t* mad, size_t len) {
  FromFabric msg;
  umad::Receive* r = msg.mutable_receive();
  r->set_handle(h.handle);
  r->set_mad(mad, len);
  transport::ToProto(h.addr, r->mutable_addr());
  OnFabricMessage(msg);
}

std::string& FabricLink::Scratch() {
  // A buffer a thread, whose capacity stays from one message to the next.
  thread_local std::string bytes;
  return bytes;
}

void FabricLink::Post(const ToFabric& msg) {
  std::string& bytes = Scratch();
  if (msg.SerializeToString(&bytes)) PostBytes(bytes);
}

void FabricLink::PostMad(const transport::MadFrameHeader& h, const void* mad, size_t len) {
  PostBytes(EncodeMad(h, mad, len));
}

std::string& FabricLink::EncodeMad(const transport::MadFrameHeader& h, const void* mad,
                                   size_t len) {
  std::string& bytes = Scratch();
  transport::EncodeMadFrame(h, mad, len, &bytes);
  return bytes;
}

void FabricLink::PostBytes(const std::string& bytes) {
  if (direct_) {
    // One packet, whole or not at all, in the order the threads got the lock. What the socket
    // cannot take now waits here, in order, for the I/O thread to send as the fabric reads (as
    // ZeroMQ's unlimited queue held it): a send never blocks, so a fabric that stopped reading
    // cannot hold up a thread that holds the library's locks, and requests still time out.
    bool queued;
    {
      NoCancel no_cancel;
      std::lock_guard lock(socket_mu_);
      if (direct_fd_ < 0) {
        HOST_TRACE("message to the fabric dropped: not connected");
        return;
      }
      if (outbox_.empty() && SendNow(bytes)) return;
      outbox_.push_back(bytes);
      queued = outbox_.size() == 1;
    }
    if (queued) Wake();  // the I/O thread now waits for room
    return;
  }
  bool unread;
  {
    NoCancel no_cancel;
    std::lock_guard lock(socket_mu_);
    if (!dealer_) return;
    if (RetryOnEintr([&] { return zmq_send(dealer_, bytes.data(), bytes.size(), ZMQ_DONTWAIT); }) <
        0)
      HOST_TRACE("message to the fabric dropped: %s", zmq_strerror(zmq_errno()));
    unread = Readable();
  }
  // The send may have consumed the edge the I/O thread waits on (ZMQ_FD is edge-triggered):
  // if something is waiting to be read, tell it so.
  if (unread) Wake();
}

std::optional<FromFabric> FabricLink::Call(ToFabric msg, std::chrono::milliseconds timeout) {
  uint64_t id;
  {
    std::lock_guard lock(rpc_mu_);
    id = next_request_++;
    rpc_.emplace(id, std::nullopt);
  }
  msg.set_request(id);
  Post(msg);
  std::unique_lock lock(rpc_mu_);
  rpc_cv_.wait_for(lock, timeout, [&] { return rpc_.at(id).has_value(); });
  std::optional<FromFabric> reply = std::move(rpc_.at(id));
  rpc_.erase(id);
  if (!reply) responsive_ = false;
  return reply;
}

bool FabricLink::Readable() {
  int events = 0;
  size_t size = sizeof events;
  return RetryOnEintr([&] { return zmq_getsockopt(dealer_, ZMQ_EVENTS, &events, &size); }) == 0 &&
         (events & ZMQ_POLLIN);
}

int FabricLink::ReceiveAll() {
  int handled = 0;
  for (;;) {
    zmq_msg_t part;
    zmq_msg_init(&part);
    int received;
    {
      // Released before the message is handled: a listener may Post from here.
      std::lock_guard lock(socket_mu_);
      received = RetryOnEintr([&] { return zmq_msg_recv(&part, dealer_, ZMQ_DONTWAIT); });
    }
    if (received < 0) {
      zmq_msg_close(&part);
      return handled;
    }
    ++handled;
    Dispatch(zmq_msg_data(&part), zmq_msg_size(&part));
    zmq_msg_close(&part);
  }
}

void FabricLink::Dispatch(const void* data, size_t size) {
  if (transport::IsMadFrame(data, size)) {
    transport::MadFrameHeader h;
    const uint8_t* mad;
    size_t len;
    if (!transport::DecodeMadFrame(data, size, transport::MadFrameKind::kReceive, &h, &mad, &len)) {
      HOST_TRACE("malformed MAD frame from the fabric dropped (%zu bytes)", size);
      return;
    }
    responsive_ = true;
    listener_->OnFabricMad(h, mad, len);
    return;
  }
  FromFabric msg;
  if (!msg.ParseFromArray(data, static_cast<int>(size))) {
    HOST_TRACE("unparsable message from the fabric dropped");
    return;
  }
  responsive_ = true;
  if (msg.request() != 0) {
    std::lock_guard lock(rpc_mu_);
    auto it = rpc_.find(msg.request());
    if (it != rpc_.end()) {
      it->second = std::move(msg);
      rpc_cv_.notify_all();
      return;
    }
  }
  listener_->OnFabricMessage(msg);
}

void FabricLink::ReadMonitor() {
  for (;;) {
    // Each event is two frames: 2-byte event number + 4-byte value, then the endpoint.
    zmq_msg_t frame;
    zmq_msg_init(&frame);
    if (zmq_msg_recv(&frame, monitor_, ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(&frame);
      return;
    }
    uint16_t event = 0;
    if (zmq_msg_size(&frame) >= sizeof event)
      std::memcpy(&event, zmq_msg_data(&frame), sizeof event);
    bool more = zmq_msg_more(&frame);
    zmq_msg_close(&frame);
    while (more) {
      zmq_msg_init(&frame);
      if (zmq_msg_recv(&frame, monitor_, 0) < 0)
        more = false;
      else
        more = zmq_msg_more(&frame);
      zmq_msg_close(&frame);
    }
    if (event == ZMQ_EVENT_CONNECTED && ++connects_ > 1) {
      HOST_TRACE("reconnected to the fabric; attaching again");
      listener_->OnReconnected();
    }
  }
}

int FabricLink::TryReceive(size_t max) {
  NoCancel no_cancel;
  std::unique_lock lock(dispatch_mu_, std::try_to_lock);
  if (!lock) return -1;
  return direct_ ? ReceiveAllDirect(max) : ReceiveAll();
}

bool FabricLink::SendNow(const std::string& bytes) {
  ssize_t n;
  while ((n = send(direct_fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 &&
         errno == EINTR) {
  }
  if (n >= 0) return true;
  if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
  // The fabric is gone: the message is lost with the connection, as on the other link, and the
  // I/O thread notices the hang-up and connects again.
  HOST_TRACE("message to the fabric dropped: %s", std::strerror(errno));
  return true;
}

void FabricLink::FlushOutbox() {
  std::lock_guard lock(socket_mu_);
  while (!outbox_.empty() && direct_fd_ >= 0 && SendNow(outbox_.front())) outbox_.pop_front();
}

int FabricLink::BeginReceiving() {
  if (!direct_) return -1;
  std::lock_guard lock(socket_mu_);
  if (direct_fd_ >= 0) ++receivers_;
  return direct_fd_;
}

void FabricLink::DropDirect() {
  std::lock_guard lock(socket_mu_);
  if (direct_fd_ >= 0) retired_.push_back(direct_fd_);
  direct_fd_ = -1;
  // What was waiting for room went with the connection; a reconnection attaches afresh.
  outbox_.clear();
}

void FabricLink::CloseRetired() {
  // A receiver counted now may hold a retired descriptor between BeginReceiving and its poll:
  // closed under it, the number could be reused by an unrelated open(). With none counted,
  // nobody holds one (BeginReceiving hands out only the live socket).
  if (receivers_ > 0) return;
  for (int fd : retired_) close(fd);
  retired_.clear();
}

int FabricLink::ReceiveAllDirect(size_t max) {
  int handled = 0;
  while (static_cast<size_t>(handled) < max) {
    int fd;
    {
      std::lock_guard lock(socket_mu_);
      fd = direct_fd_;
    }
    if (fd < 0) return handled;
    // Only this thread (holding dispatch_mu_) closes the socket, so fd stays valid here.
    ssize_t n = recv(fd, buf_.data(), buf_.size(), MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return handled;
    if (n <= 0 || static_cast<size_t>(n) >= kMaxDirectMessage) {
      HOST_TRACE("the fabric hung up; connecting again every %lld ms",
                 static_cast<long long>(kReconnectEvery.count()));
      DropDirect();
      return handled;
    }
    ++handled;
    Dispatch(buf_.data(), static_cast<size_t>(n));
  }
  return handled;
}

void FabricLink::RunDirect() {
  auto next_connect = std::chrono::steady_clock::now();
  while (!stop_) {
    std::unique_lock dispatch(dispatch_mu_);
    auto now = std::chrono::steady_clock::now();
    int fd;
    bool outbox;
    {
      std::lock_guard lock(socket_mu_);
      fd = direct_fd_;
      // Empty after a reconnection below; a Post that fills it later wakes this thread.
      outbox = !outbox_.empty();
      CloseRetired();
    }
    if (fd < 0 && now >= next_connect) {
      // A fabric that went and came back has forgotten our attachments: the listener sends
      // them again, on the new connection.
      int nfd = ConnectDirect(direct_path_);
      next_connect = now + kReconnectEvery;
      if (nfd >= 0) {
        {
          std::lock_guard lock(socket_mu_);
          direct_fd_ = fd = nfd;
        }
        HOST_TRACE("reconnected to the fabric; attaching again");
        listener_->OnReconnected();
      }
    }
    std::optional<std::chrono::steady_clock::time_point> until = listener_->NextDeadline();
    if (fd < 0 && (!until || next_connect < *until)) until = next_connect;
    const bool receivers =
        receivers_ > 0 ||
        now < std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(
                  last_receiving_.load(std::memory_order_relaxed))) +
                  kReceiverCheck;
    if (receivers && (!until || now + kReceiverCheck < *until)) until = now + kReceiverCheck;
    int timeout_ms = -1;
    if (until) {
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(*until - now).count();
      timeout_ms = wait < 0 ? 0 : static_cast<int>(wait);
    }
    // The socket for input unless a receiver watches it, and for room while messages wait.
    short events = static_cast<short>((receivers ? 0 : POLLIN) | (outbox ? POLLOUT : 0));
    pollfd items[3] = {
        {events ? fd : -1, events, 0}, {wake_fd_, POLLIN, 0}, {listener_->ExtraFd(), POLLIN, 0}};
    dispatch.unlock();
    // A negative fd (lost connection, no extra fd) is ignored by poll().
    if (poll(items, 3, timeout_ms) < 0 && errno != EINTR)
      HOST_TRACE("poll: %s", std::strerror(errno));
    if (items[1].revents & POLLIN) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
    }
    dispatch.lock();
    if (items[0].revents & POLLOUT) FlushOutbox();
    if (items[0].revents & ~POLLOUT) ReceiveAllDirect();
    if (items[2].fd >= 0 && (items[2].revents & POLLIN)) listener_->OnExtraFd();
    // Left alone for a receiver that has not come back: what arrived is read before timers
    // expire the requests it answers.
    if (!(events & POLLIN) && receivers_ == 0) ReceiveAllDirect();
    listener_->OnTimers(std::chrono::steady_clock::now());
  }
}

void FabricLink::Run() {
  while (!stop_) {
    std::unique_lock dispatch(dispatch_mu_);
    auto now = std::chrono::steady_clock::now();
    long timeout_ms = -1;
    if (auto next = listener_->NextDeadline()) {
      auto wait = std::chrono::ceil<std::chrono::milliseconds>(*next - now).count();
      timeout_ms = wait < 0 ? 0 : static_cast<long>(wait);
    }
    std::vector<zmq_pollitem_t> items = {
        {nullptr, dealer_fd_, ZMQ_POLLIN, 0},
        {monitor_, 0, ZMQ_POLLIN, 0},
        {nullptr, wake_fd_, ZMQ_POLLIN, 0},
    };
    int extra = listener_->ExtraFd();
    if (extra >= 0) items.push_back({nullptr, extra, ZMQ_POLLIN, 0});
    dispatch.unlock();
    if (zmq_poll(items.data(), static_cast<int>(items.size()), timeout_ms) < 0 &&
        zmq_errno() != EINTR) {
      HOST_TRACE("zmq_poll: %s", zmq_strerror(zmq_errno()));
    }
    if (items[2].revents & ZMQ_POLLIN) {
      uint64_t count;
      [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof count);
    }
    dispatch.lock();
    ReceiveAll();
    ReadMonitor();
    if (extra >= 0 && (items[3].revents & ZMQ_POLLIN)) listener_->OnExtraFd();
    listener_->OnTimers(std::chrono::steady_clock::now());
  }
}

}  // namespace ibemu::hostclient
