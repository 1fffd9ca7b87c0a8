#include "emulator/fabric/local_channel.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace ibemu::fabric {

LocalChannel::LocalChannel(const std::string& path) : path_(path), buf_(kMaxMessage + 1) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("socket path " + path + " is longer than a Unix socket allows");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  // The run directory is ours and the fabric's name is held, so a file here is a predecessor's.
  unlink(path.c_str());
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 128) != 0) {
    std::string why = std::strerror(errno);
    if (listen_fd_ >= 0) close(listen_fd_);
    throw std::runtime_error("cannot listen at " + path + ": " + why);
  }
}

LocalChannel::~LocalChannel() {
  for (auto& [id, c] : clients_) close(c.fd);
  close(listen_fd_);
  unlink(path_.c_str());
}

void LocalChannel::AddPollItems(std::vector<zmq::pollitem_t>* items) const {
  // While out of descriptors the listening socket stays readable: not watched for a while, or
  // the service loop would spin on it.
  bool paused = std::chrono::steady_clock::now() < accept_paused_until_;
  items->push_back({nullptr, paused ? -1 : listen_fd_, ZMQ_POLLIN, 0});
  for (const auto& [id, c] : clients_)
    items->push_back(
        {nullptr, c.fd, static_cast<short>(ZMQ_POLLIN | (c.held.empty() ? 0 : ZMQ_POLLOUT)), 0});
}

namespace {
// One packet: 1 sent, 0 the socket has no room, -1 the client is gone.
int SendPacket(int fd, const std::string& m) {
  ssize_t n;
  while ((n = send(fd, m.data(), m.size(), MSG_DONTWAIT | MSG_NOSIGNAL)) < 0 && errno == EINTR) {
  }
  if (n >= 0) return 1;
  return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
}
}  // namespace

bool LocalChannel::Flush(Client& c) {
  while (!c.held.empty()) {
    int r = SendPacket(c.fd, c.held.front());
    if (r == 0) return true;
    if (r < 0) {
      c.broken = true;
      return false;
    }
    c.held.pop_front();
  }
  return true;
}

bool LocalChannel::Send(const std::string& id, const std::string& body) {
  auto it = clients_.find(id);
  if (it == clients_.end() || it->second.broken) return false;
  Client& c = it->second;
  // Straight out when nothing waits before it: held copies only what the socket cannot take.
  if (!c.held.empty()) {
    c.held.push_back(body);
    return Flush(c);
  }
  int r = SendPacket(c.fd, body);
  if (r < 0) {
    c.broken = true;
    return false;
  }
  if (r == 0) c.held.push_back(body);  // no room: sent as the client reads
  return true;
}

void LocalChannel::Poll(
    const zmq::pollitem_t* ready,
    const std::function<void(const std::string& id, std::string_view body)>& message,
    const std::function<void(const std::string& id)>& gone) {
  // In AddPollItems's order, which only this function changes; new clients are read at once.
  size_t i = 0;
  for (auto& [id, c] : clients_) c.look = !ready || ready[1 + i++].revents;
  for (bool accept = !ready || ready[0].revents; accept;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // EAGAIN; or out of descriptors, when the client waits in the backlog and the listening
      // socket is left alone for 100 ms.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        accept_paused_until_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
      break;
    }
    std::string id(1, kIdMark);
    id += std::to_string(next_id_++);
    clients_[id].fd = fd;
  }
  std::vector<std::string> closed;
  for (auto& [id, c] : clients_) {
    if (!c.look) continue;
    bool open = !c.broken && Flush(c);
    while (open) {
      ssize_t n = recv(c.fd, buf_.data(), buf_.size(), MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0 || static_cast<size_t>(n) > kMaxMessage) {
        open = false;  // hung up, failed, or sent more than a message may hold
        break;
      }
      // The handler may send to this client or any other; the map is not changed under us.
      message(id, std::string_view(buf_.data(), static_cast<size_t>(n)));
    }
    if (!open || c.broken) closed.push_back(id);
  }
  for (const std::string& id : closed) {
    close(clients_[id].fd);
    clients_.erase(id);
    gone(id);
  }
}

}  // namespace ibemu::fabric
