#include "emulator/fabric/service_poller.h"

#include <cerrno>
#include <ctime>

namespace ibemu::fabric {

ServicePoller::ServicePoller(std::vector<zmq::socket_t*> sockets)
    : sockets_(std::move(sockets)), check_(sockets_.size(), true) {
  for (zmq::socket_t* s : sockets_) fds_.push_back(s->get(zmq::sockopt::fd));
}

std::vector<bool> ServicePoller::Wait(std::chrono::microseconds wait,
                                      std::vector<zmq::pollitem_t>* raw) {
  const size_t n = sockets_.size();
  std::vector<bool> ready(n, false);
  bool any = false;
  auto ask = [&](size_t i) {
    ready[i] = (sockets_[i]->get(zmq::sockopt::events) & ZMQ_POLLIN) != 0;
    check_[i] = false;
    any = any || ready[i];
  };
  for (size_t i = 0; i < n; ++i)
    if (check_[i]) ask(i);
  pfds_.clear();
  for (int fd : fds_) pfds_.push_back({fd, POLLIN, 0});
  for (const zmq::pollitem_t& it : *raw)
    pfds_.push_back({it.fd,
                     static_cast<short>(((it.events & ZMQ_POLLIN) ? POLLIN : 0) |
                                        ((it.events & ZMQ_POLLOUT) ? POLLOUT : 0)),
                     0});
  if (any) wait = std::chrono::microseconds(0);
  timespec ts{static_cast<time_t>(wait.count() / 1000000),
              static_cast<long>(wait.count() % 1000000) * 1000};
  if (ppoll(pfds_.data(), pfds_.size(), &ts, sigmask_) < 0) {
    for (zmq::pollitem_t& it : *raw) it.revents = 0;
    return ready;  // EINTR: the caller looks at its stop flag
  }
  for (size_t i = 0; i < n; ++i)
    if (pfds_[i].revents) ask(i);
  for (size_t k = 0; k < raw->size(); ++k) {
    short r = pfds_[n + k].revents;
    (*raw)[k].revents = static_cast<short>(((r & (POLLIN | POLLHUP | POLLERR)) ? ZMQ_POLLIN : 0) |
                                           ((r & POLLOUT) ? ZMQ_POLLOUT : 0));
  }
  return ready;
}

}  // namespace ibemu::fabric
