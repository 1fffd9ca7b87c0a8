// Completion queues and completion channels. Completions arrive from the emulated HCA on the
// library's I/O thread, or on a thread polling an empty CQ or waiting for an event
// (Hca::Progress); poll_cq takes them in order. A CQ armed with req_notify_cq raises one
// event on its channel at the next completion (only a solicited one, or an error, when armed for
// solicited), and is disarmed until armed again; the channel's fd is readable while an event
// waits, so poll/epoll on it work.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <new>

#include "hostlib/verbs/device.h"
#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/resources.h"

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace ibemu::verbs {

Cq* ToCq(ibv_cq* cq) {
  return reinterpret_cast<Cq*>(cq);
}

namespace {

CompChannel* ToChannel(ibv_comp_channel* ch) {
  return reinterpret_cast<CompChannel*>(ch);
}

// One event for `cq` on its channel, readable on the channel's fd.
void RaiseEvent(ibv_cq* cq) {
  CompChannel* ch = ToChannel(cq->channel);
  {
    std::lock_guard lock(ch->mu);
    ch->events.push_back(cq);
  }
  uint64_t one = 1;
  if (write(ch->ch.fd, &one, sizeof one) != sizeof one) {
    // An eventfd write fails only on overflow of its 64-bit counter.
  }
}

}  // namespace

void Cq::Add(const ibv_wc& wc, bool solicited, uint64_t timestamp_ns) {
  bool raise = false;
  {
    std::lock_guard lock(mu);
    if (cqes.size() >= static_cast<size_t>(cq.cqe)) {
      overrun = true;  // a real CQ overruns: the completion is lost and the CQ is in error
      return;
    }
    cqes.push_back(wc);
    timestamps.push_back(timestamp_ns);
    if (armed && (!solicited_only || solicited || wc.status != IBV_WC_SUCCESS)) {
      armed = false;
      raise = cq.channel != nullptr;
    }
  }
  if (raise) RaiseEvent(&cq);
}

// A program that spins on an empty CQ competes for the CPU with what would fill it: here the
// "hardware" is the fabric process and the library's I/O thread, on the same cores. An empty
// poll therefore takes in what the fabric has sent itself, without waiting for the I/O thread to
// be scheduled, and yields when there was nothing, so that the fabric runs at once rather than
// when the scheduler preempts the spinner (docs/performance.md).
// Inside an ibv_start_poll/ibv_end_poll bracket the thread holds that CQ's lock, and taking in
// a completion for it here would lock it again: only the I/O thread takes them in then.
thread_local int open_brackets = 0;

bool YieldToTheHca() {
  if (open_brackets == 0 && Hca::Get().Progress() > 0) return true;
  sched_yield();
  return false;
}

int PollCq(ibv_cq* ibcq, int num_entries, ibv_wc* wc) {
  Cq* cq = ToCq(ibcq);
  for (int attempt = 0;; ++attempt) {
    int n = 0;
    {
      std::lock_guard lock(cq->mu);
      if (cq->overrun) return -EIO;
      while (n < num_entries && !cq->cqes.empty()) {
        wc[n++] = cq->cqes.front();
        cq->cqes.pop_front();
        cq->timestamps.pop_front();
      }
    }
    if (n > 0 || attempt > 0 || !YieldToTheHca()) return n;
  }
}

namespace {

// The extended poll (ibv_start_poll/ibv_next_poll/ibv_end_poll): the CQ's lock is held from a
// successful start to the end, as mlx5 holds it, and the ibv_wc_read_* calls read the current one.
Cq* OfEx(ibv_cq_ex* cq) {
  return reinterpret_cast<Cq*>(cq);
}

int TakeCurrent(Cq* cq) {
  if (cq->overrun) return EIO;
  if (cq->cqes.empty()) return ENOENT;
  cq->current = cq->cqes.front();
  cq->current_ts = cq->timestamps.front();
  cq->cqes.pop_front();
  cq->timestamps.pop_front();
  cq->cqx.wr_id = cq->current.wr_id;
  cq->cqx.status = cq->current.status;
  return 0;
}

int StartPoll(ibv_cq_ex* cqx, ibv_poll_cq_attr* attr) {
  if (attr && attr->comp_mask) return EINVAL;
  Cq* cq = OfEx(cqx);
  for (int attempt = 0;; ++attempt) {
    cq->mu.lock();
    int r = TakeCurrent(cq);
    if (r == 0) {
      ++open_brackets;
      return 0;
    }
    cq->mu.unlock();  // no end_poll follows a failed start
    if (r != ENOENT || attempt > 0 || !YieldToTheHca()) return r;
  }
}
int NextPoll(ibv_cq_ex* cqx) {
  return TakeCurrent(OfEx(cqx));
}
void EndPoll(ibv_cq_ex* cqx) {
  --open_brackets;
  OfEx(cqx)->mu.unlock();
}
ibv_wc_opcode ReadOpcode(ibv_cq_ex* c) {
  return OfEx(c)->current.opcode;
}
uint32_t ReadVendorErr(ibv_cq_ex* c) {
  return OfEx(c)->current.vendor_err;
}
uint32_t ReadByteLen(ibv_cq_ex* c) {
  return OfEx(c)->current.byte_len;
}
__be32 ReadImm(ibv_cq_ex* c) {
  return OfEx(c)->current.imm_data;
}
uint32_t ReadQpNum(ibv_cq_ex* c) {
  return OfEx(c)->current.qp_num;
}
uint32_t ReadSrcQp(ibv_cq_ex* c) {
  return OfEx(c)->current.src_qp;
}
unsigned int ReadWcFlags(ibv_cq_ex* c) {
  return OfEx(c)->current.wc_flags;
}
uint32_t ReadSlid(ibv_cq_ex* c) {
  return OfEx(c)->current.slid;
}
uint8_t ReadSl(ibv_cq_ex* c) {
  return OfEx(c)->current.sl;
}
uint8_t ReadDlidPathBits(ibv_cq_ex* c) {
  return OfEx(c)->current.dlid_path_bits;
}
// The HCA's clock runs at 1 GHz of virtual time (hca_core_clock 1000000 kHz): ticks are ns.
uint64_t ReadTs(ibv_cq_ex* c) {
  return OfEx(c)->current_ts;
}

constexpr uint64_t kWcFlags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
                              IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

}  // namespace

ibv_cq_ex* CreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr) {
  uint32_t known = IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD;
  if ((attr->wc_flags & ~kWcFlags) || (attr->comp_mask & ~known)) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  ibv_cq* ibcq = ibv_create_cq(ctx, static_cast<int>(attr->cqe), attr->cq_context, attr->channel,
                               static_cast<int>(attr->comp_vector));
  if (!ibcq) return nullptr;
  ibv_cq_ex& x = ToCq(ibcq)->cqx;
  x.start_poll = StartPoll;
  x.next_poll = NextPoll;
  x.end_poll = EndPoll;
  x.read_opcode = ReadOpcode;
  x.read_vendor_err = ReadVendorErr;
  x.read_byte_len = ReadByteLen;
  x.read_imm_data = ReadImm;
  x.read_qp_num = ReadQpNum;
  x.read_src_qp = ReadSrcQp;
  x.read_wc_flags = ReadWcFlags;
  x.read_slid = ReadSlid;
  x.read_sl = ReadSl;
  x.read_dlid_path_bits = ReadDlidPathBits;
  x.read_completion_ts = ReadTs;
  x.read_completion_wallclock_ns = ReadTs;
  return &x;
}

int QueryRtValues(ibv_context*, ibv_values_ex* values) {
  if (values->comp_mask & ~IBV_VALUES_MASK_RAW_CLOCK) return EINVAL;
  if (!(values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK)) {
    values->comp_mask = 0;
    return 0;
  }
  umad::VerbsRequest req;
  req.mutable_read_clock();
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) return rep.status();
  // As mlx5 answers: the raw cycle count in tv_nsec (a 1 GHz clock here, hca_core_clock), tv_sec
  // 0, and comp_mask saying which values were filled.
  values->raw_clock.tv_sec = 0;
  values->raw_clock.tv_nsec = static_cast<long>(rep.clock_ns());
  values->comp_mask = IBV_VALUES_MASK_RAW_CLOCK;
  return 0;
}

// Arming a CQ that still holds completions raises the event at once, as a ConnectX does (its arm
// doorbell carries the consumer index, and a CQE beyond it makes the event): Open MPI's UD
// connection manager polls at most 20 completions per event and re-arms without polling again,
// and with "the next completion" alone the rest waited for a message that might never come.
int ReqNotifyCq(ibv_cq* ibcq, int solicited_only) {
  Cq* cq = ToCq(ibcq);
  bool raise = false;
  {
    std::lock_guard lock(cq->mu);
    cq->armed = true;
    cq->solicited_only = solicited_only != 0;
    // Whether what it holds raises the event now: anything, when armed for every completion; an
    // error, when armed for solicited ones (the held completions do not keep their solicited
    // flag, so a held solicited success waits for the next completion).
    bool pending = false;
    for (const ibv_wc& wc : cq->cqes)
      if (!cq->solicited_only || wc.status != IBV_WC_SUCCESS) pending = true;
    if (pending && cq->cq.channel) {
      cq->armed = false;
      raise = true;
    }
  }
  if (raise) RaiseEvent(&cq->cq);
  return 0;
}

}  // namespace ibemu::verbs

using namespace ibemu::verbs;

IBEMU_EXPORT ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  auto* ch = Allocate<CompChannel>();
  if (!ch) return nullptr;
  ch->ch.context = context;
  // Semaphore mode: each read takes one event, as each read of a uverbs event file does.
  ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  ch->ch.refcnt = 0;
  if (ch->ch.fd < 0) {
    int e = errno;
    delete ch;
    errno = e;
    return nullptr;
  }
  return &ch->ch;
}

IBEMU_EXPORT int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  if (channel->refcnt) return EBUSY;  // CQs still use it
  close(channel->fd);
  delete ToChannel(channel);
  return 0;
}

IBEMU_EXPORT ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context,
                                   ibv_comp_channel* channel, int comp_vector) {
  ibv_device_attr attr;
  if (cqe < 1 || comp_vector < 0 || comp_vector >= context->num_comp_vectors ||
      ibv_query_device(context, &attr) != 0 || cqe > attr.max_cqe) {
    errno = EINVAL;
    return nullptr;
  }
  auto* cq = Allocate<Cq>();
  if (!cq) return nullptr;
  cq->cq.context = context;
  cq->cq.channel = channel;
  cq->cq.cq_context = cq_context;
  cq->cq.cqe = cqe;
  pthread_mutex_init(&cq->cq.mutex, nullptr);
  pthread_cond_init(&cq->cq.cond, nullptr);
  if (channel) {
    std::lock_guard lock(ToChannel(channel)->mu);
    ++channel->refcnt;
  }
  return &cq->cq;
}

IBEMU_EXPORT int ibv_resize_cq(ibv_cq* ibcq, int cqe) {
  Cq* cq = ToCq(ibcq);
  std::lock_guard lock(cq->mu);
  if (cqe < 1 || static_cast<size_t>(cqe) < cq->cqes.size()) return EINVAL;
  cq->cq.cqe = cqe;
  return 0;
}

IBEMU_EXPORT int ibv_destroy_cq(ibv_cq* ibcq) {
  Cq* cq = ToCq(ibcq);
  if (ibv_comp_channel* ch = cq->cq.channel) {
    CompChannel* c = ToChannel(ch);
    std::lock_guard lock(c->mu);
    --ch->refcnt;
    // Events of this CQ not yet read go with it.
    for (auto it = c->events.begin(); it != c->events.end();)
      it = *it == ibcq ? c->events.erase(it) : it + 1;
  }
  pthread_mutex_destroy(&cq->cq.mutex);
  pthread_cond_destroy(&cq->cq.cond);
  delete cq;
  return 0;
}

IBEMU_EXPORT int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  // A blocking wait also watches the connection to the fabric and takes in what arrives itself,
  // so the completion that raises the event does not wait for the I/O thread to be scheduled.
  // Anything unusual (a signal, an fd in error, another thread taking messages in, which then
  // drains the socket) ends in the plain blocking read, with its errno and restart semantics.
  int flags = fcntl(channel->fd, F_GETFL);
  int link_fd = Hca::Get().progress_fd();
  if (flags >= 0 && !(flags & O_NONBLOCK) && link_fd >= 0 && open_brackets == 0) {
    for (;;) {
      pollfd p[2] = {{channel->fd, POLLIN, 0}, {link_fd, POLLIN, 0}};
      if (poll(p, 2, -1) < 0) break;
      if ((p[0].revents | p[1].revents) & (POLLERR | POLLHUP | POLLNVAL)) break;
      if (p[0].revents & POLLIN) break;
      if ((p[1].revents & POLLIN) && Hca::Get().Progress() < 0) break;
    }
  }
  uint64_t n;
  if (read(channel->fd, &n, sizeof n) != sizeof n) return -1;  // errno from read (EAGAIN, ...)
  CompChannel* c = ToChannel(channel);
  std::lock_guard lock(c->mu);
  if (c->events.empty()) {  // its CQ was destroyed in between
    errno = EAGAIN;
    return -1;
  }
  *cq = c->events.front();
  c->events.pop_front();
  *cq_context = (*cq)->cq_context;
  return 0;
}

IBEMU_EXPORT void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_signal(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}
