// How `ibemu up`'s service loop waits: one ppoll() on the ZeroMQ sockets' notification
// descriptors (ZMQ_FD) and the direct channel's sockets, with a timeout in microseconds.
// zmq_poll asks every ZeroMQ socket for its state before and after waiting, which is four or more
// system calls a socket (each check looks at its command pipe and calls getpid), and this machine's
// system calls cost microseconds: more than the rest of a MAD's turn. ZMQ_FD is an edge: it fires
// when the socket may have changed, and any call on the socket (a send, a receive) may consume the
// edge. So a socket is asked for its state (ZMQ_EVENTS) only when its descriptor fired or when the
// loop used it since the last wait (Touched); otherwise the descriptor alone is watched.
#pragma once
#include <poll.h>
#include <signal.h>

#include <chrono>
#include <vector>
#include <zmq.hpp>

namespace ibemu::fabric {

class ServicePoller {
 public:
  explicit ServicePoller(std::vector<zmq::socket_t*> sockets);

  // The loop sent or received on ZeroMQ socket `i` (in the constructor's order).
  void Touched(size_t i) { check_[i] = true; }
  // Waits at most `wait` (zero: just looks) for a ZeroMQ socket to have a message or an item of
  // `raw` (plain descriptors) to have events; fills in the raw items' revents. Returns, for each
  // socket, whether it has a message to receive. Interrupted by a signal, it returns early.
  std::vector<bool> Wait(std::chrono::microseconds wait, std::vector<zmq::pollitem_t>* raw);
  // The signal mask in force during the wait (ppoll's), when the caller blocks its stop signals
  // elsewhere: a signal that comes between the caller's look at its stop flag and the wait then
  // ends the wait instead of waiting with it.
  void set_wait_sigmask(const sigset_t* mask) { sigmask_ = mask; }

 private:
  std::vector<zmq::socket_t*> sockets_;
  std::vector<int> fds_;     // ZMQ_FD of each socket
  std::vector<bool> check_;  // ask ZMQ_EVENTS before trusting the descriptor
  std::vector<pollfd> pfds_;
  const sigset_t* sigmask_ = nullptr;
};

}  // namespace ibemu::fabric
