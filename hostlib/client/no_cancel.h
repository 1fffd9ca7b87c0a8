// Holds off pthread_cancel for a scope. OpenSM stops its receiving thread with pthread_cancel;
// the library's critical sections (a socket read and the dispatch of what it read, a MAD taken
// off a queue and handed to the caller) must not be cut between their halves by a system call
// that is a cancellation point.
#pragma once
#include <pthread.h>

namespace ibemu::hostclient {

class NoCancel {
 public:
  NoCancel() { pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old_); }
  ~NoCancel() { pthread_setcancelstate(old_, nullptr); }
  NoCancel(const NoCancel&) = delete;
  NoCancel& operator=(const NoCancel&) = delete;

 private:
  int old_ = 0;
};

}  // namespace ibemu::hostclient
