#include "hostlib/umad/host.h"

#include <dirent.h>
#include <endian.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include "common/mad/mad_header.h"
#include "hostlib/client/host_log.h"
#include "hostlib/client/no_cancel.h"
#include "hostlib/umad/rmpp_header.h"

namespace ibemu::umad {

using hostclient::NoCancel;
using hostclient::Warn;
using mad::ConstMadView;
using mad::IsVendorRange2;
using mad::kMadBytes;
using mad::kMadHeaderBytes;
using mad::MadView;

namespace {

// ---------------------------------------------------------------------------------------------
// How ib_mad treats a MAD by its method.

// ib_response_mad(): the R bit, and TrapRepress, which answers a Trap without carrying the R bit
// (so not MadView::is_response()). Responses are routed to the agent that owns the TID;
// everything else by class and method.
bool IsResponseMad(uint8_t m) {
  return (m & mad::method::kResponse) != 0 || m == mad::method::kTrapRepress;
}

// ib_umad_write(): the kernel stamps the agent's hi_tid into TID bits 63..32 of requests that
// will draw a response, so the response finds its way back. Send and TrapRepress are left alone.
bool StampsTid(uint8_t m) {
  return !IsResponseMad(m) && m != mad::method::kSend;
}

// ---------------------------------------------------------------------------------------------
// The process-wide instance. It is created on first use (not at load time, so a program that
// forks to daemonize, as OpenSM -B does, starts its I/O thread in the child) and never destroyed
// at exit: the I/O thread may still be running while static destructors run.

std::mutex g_host_mu;
// Set under g_host_mu, read without it: every umad call asks for the instance, and a call_once
// and a mutex there cost each MAD about 150 instructions on each of OpenSM's sending and
// receiving threads.
std::atomic<Host*> g_host{nullptr};

void AtForkPrepare() {
  g_host_mu.lock();
}
void AtForkParent() {
  g_host_mu.unlock();
}
void AtForkChild() {
  // The child has no I/O thread and must not touch the parent's ZeroMQ context: it starts over
  // (the parent's instance is abandoned, not freed).
  g_host.store(nullptr, std::memory_order_release);
  g_host_mu.unlock();
}

// issm files still on disk, removed at exit.
struct IssmFiles {
  std::mutex mu;
  std::set<std::string> paths;
};
IssmFiles& Files() {
  static IssmFiles* files = [] {
    auto* f = new IssmFiles;
    std::atexit([] {
      std::lock_guard lock(Files().mu);
      for (const auto& p : Files().paths) unlink(p.c_str());
      Files().paths.clear();
    });
    return f;
  }();
  return *files;
}

// ---------------------------------------------------------------------------------------------
// struct ib_mad_addr (network order) <-> a MAD frame's address (host order).

transport::MadFrameAddress ToFrame(const ib_mad_addr_t& a) {
  transport::MadFrameAddress f;
  f.qpn = be32toh(a.qpn) & 0xFFFFFF;
  f.qkey = be32toh(a.qkey);
  f.lid = be16toh(a.lid);
  f.sl = a.sl;
  f.path_bits = a.path_bits;
  f.pkey_index = a.pkey_index;
  f.grh_present = a.grh_present != 0;
  if (a.grh_present) {
    std::memcpy(f.gid, a.gid, sizeof f.gid);
    f.hop_limit = a.hop_limit;
    f.traffic_class = a.traffic_class;
    f.flow_label = be32toh(a.flow_label);
  }
  return f;
}

ib_mad_addr_t FromFrame(const transport::MadFrameAddress& f) {
  ib_mad_addr_t a;
  std::memset(&a, 0, sizeof a);
  a.qpn = htobe32(f.qpn);
  a.qkey = htobe32(f.qkey);
  a.lid = htobe16(f.lid);
  a.sl = f.sl;
  a.path_bits = f.path_bits;
  a.pkey_index = f.pkey_index;
  a.grh_present = f.grh_present ? 1 : 0;
  if (f.grh_present) {
    std::memcpy(a.gid, f.gid, sizeof a.gid);
    a.hop_limit = f.hop_limit;
    a.traffic_class = f.traffic_class;
    a.flow_label = htobe32(f.flow_label);
  }
  return a;
}

// What read() on a umad file returns: the header, then the MAD; in `rec`'s storage when it has
// room.
std::vector<uint8_t> MakeRecord(uint32_t agent_id, uint32_t status, const ib_mad_addr_t& addr,
                                const void* mad, size_t len, std::vector<uint8_t> rec = {}) {
  rec.resize(kUmadHeaderBytes + len);
  ib_user_mad hdr;
  std::memset(&hdr, 0, sizeof hdr);
  hdr.agent_id = agent_id;
  hdr.status = status;
  hdr.length = static_cast<uint32_t>(kUmadHeaderBytes + len);
  hdr.addr = addr;
  std::memcpy(rec.data(), &hdr, kUmadHeaderBytes);
  std::memcpy(rec.data() + kUmadHeaderBytes, mad, len);
  return rec;
}

}  // namespace

Host& Host::Get() {
  if (Host* h = g_host.load(std::memory_order_acquire)) return *h;
  static std::once_flag atfork;
  std::call_once(atfork, [] { pthread_atfork(AtForkPrepare, AtForkParent, AtForkChild); });
  std::lock_guard lock(g_host_mu);
  Host* h = g_host.load(std::memory_order_relaxed);
  if (!h) {
    h = new Host(Config::FromEnv());
    g_host.store(h, std::memory_order_release);
  }
  return *h;
}

void Host::ResetForTesting() {
  std::lock_guard lock(g_host_mu);
  delete g_host.exchange(nullptr);
}

// hi_tids differ between processes attached to the same port (each delivers every response to
// all its agents by hi_tid), as they would with one kernel numbering every agent on the host.
Host::Host(Config cfg)
    : cfg_(std::move(cfg)), next_hi_tid_(static_cast<uint32_t>(getpid()) << 10) {}

Host::~Host() {
  link_.Stop();
  std::lock_guard lock(mu_);
  for (auto& [fd, file] : files_) close(fd);
  files_.clear();
  by_handle_.clear();
  for (auto& [port, issm] : issm_) {
    unlink(issm.path.c_str());
    std::lock_guard files_lock(Files().mu);
    Files().paths.erase(issm.path);
  }
  if (inotify_fd_ >= 0) close(inotify_fd_);
}

void Host::Hint(const std::string& why) {
  if (hinted_.exchange(true)) return;
  std::fprintf(stderr, "libibumad (ibemu): no InfiniBand device: %s\n", why.c_str());
}

bool Host::EnsureLink() {
  std::lock_guard lock(mu_);
  return link_.Start(cfg_.Endpoint(), cfg_.DirectPath());
}

int Host::Describe(CaAttributes* ca) {
  if (cfg_.node.empty()) {
    Hint(
        "IBEMU_UMAD_PORT is not set, so this process stands behind no HCA port of an emulated "
        "fabric. Start a fabric with `ibemu up <topology or scenario>` and run the tool with "
        "`ibemu exec --port <node>:<port> -- <tool>` (or set IBEMU_UMAD_PORT=<node>:<port>)");
    return -ENODEV;
  }
  std::string why;
  auto described = hostclient::DescribeNode(
      cfg_, cfg_.node, "IBEMU_UMAD_PORT", link_, [this] { return EnsureLink(); }, &why);
  if (!described) {
    Hint(why);
    return -ENODEV;
  }
  *ca = std::move(*described);
  return 0;
}

int Host::Resolve(const char* ca_name, int* portnum, CaAttributes* ca) {
  if (int r = Describe(ca); r < 0) return r;
  if (ca_name && *ca_name && CaName(*ca) != ca_name) return -ENODEV;
  if (portnum) {
    int port = ResolvePort(*ca, *portnum, cfg_);
    if (port < 0) return -EINVAL;
    *portnum = port;
  }
  return 0;
}

UmadFile* Host::FindLocked(int fd) {
  auto it = files_.find(fd);
  return it == files_.end() ? nullptr : it->second.get();
}

uint32_t Host::NextHiTid() {
  return ++next_hi_tid_;
}

int Host::OpenPort(const char* ca_name, int portnum) {
  CaAttributes ca;
  if (int r = Resolve(ca_name, &portnum, &ca); r < 0) return r;
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) return -EIO;
  uint32_t handle;
  {
    // Registered before attaching, so nothing the fabric sends right after is lost.
    std::lock_guard lock(mu_);
    handle = next_handle_++;
    auto file = std::make_unique<UmadFile>();
    file->fd = fd;
    file->handle = handle;
    file->portnum = portnum;
    by_handle_[handle] = file.get();
    files_[fd] = std::move(file);
  }
  ToFabric msg;
  msg.mutable_attach()->set_node(cfg_.node);
  msg.mutable_attach()->set_port(static_cast<uint32_t>(portnum));
  msg.mutable_attach()->set_handle(handle);
  msg.mutable_attach()->set_mad_frames(true);
  auto reply = link_.Call(msg, cfg_.query_timeout);
  bool ok = reply && reply->has_attached() && reply->attached().ok();
  std::lock_guard lock(mu_);
  if (!ok) {
    if (reply)
      Warn(__func__, "cannot attach to %s:%d: %s", cfg_.node.c_str(), portnum,
           reply->attached().error().c_str());
    ToFabric detach;
    detach.mutable_detach()->set_handle(handle);
    link_.Post(detach);
    by_handle_.erase(handle);
    files_.erase(fd);
    close(fd);
    return reply ? -EINVAL : -EIO;
  }
  files_[fd]->frames = reply->attached().mad_frames();
  if (auto it = issm_.find(portnum); it != issm_.end() && it->second.asserted) {
    files_[fd]->issm = true;
    PostIsSm(*files_[fd], true);
  }
  HOST_TRACE("opened %s port %d fd %d handle %u", cfg_.node.c_str(), portnum, fd, handle);
  return fd;
}

int Host::ClosePort(int fd) {
  std::lock_guard lock(mu_);
  UmadFile* file = FindLocked(fd);
  if (!file) return 0;
  if (file->issm) PostIsSm(*file, false);
  ToFabric detach;
  detach.mutable_detach()->set_handle(file->handle);
  link_.Post(detach);
  // Wake any thread blocked in umad_recv/umad_poll on it: it finds the file gone.
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(fd, &one, sizeof one);
  by_handle_.erase(file->handle);
  files_.erase(fd);
  close(fd);
  return 0;
}

int Host::Register(int fd, const AgentRequest& req, uint32_t* agent_id) {
  // ib_register_mad_agent()'s checks.
  if (req.class_version >= 8 || req.rmpp_version > 1) return -EINVAL;
  if (IsVendorRange2(req.mgmt_class) && (req.oui == 0 || req.oui > 0xFFFFFF)) return -EINVAL;
  if (req.mgmt_class != 0 && req.rmpp_version != 0 && !IsRmppClass(req.mgmt_class)) return -EINVAL;
  std::lock_guard lock(mu_);
  UmadFile* file = FindLocked(fd);
  if (!file) return -EBADF;
  for (const auto& [other_fd, other] : files_)
    if (other->portnum == file->portnum && other->agents.Conflicts(req)) return -EINVAL;
  auto id = file->agents.Add(req, NextHiTid());
  if (!id) return -ENOMEM;
  *agent_id = *id;
  HOST_TRACE("fd %d agent %u class 0x%x version %u qp %u", fd, *id, req.mgmt_class,
             req.class_version, mad::QpnForClass(req.mgmt_class));
  return 0;
}

int Host::Unregister(int fd, uint32_t agent_id) {
  std::lock_guard lock(mu_);
  UmadFile* file = FindLocked(fd);
  if (!file) return -EBADF;
  if (!file->agents.Remove(agent_id)) return -EINVAL;
  file->sends.DropAgent(agent_id);
  file->rmpp_sends.DropAgent(agent_id);
  file->rmpp_recvs.DropAgent(agent_id);
  return 0;
}

void Host::PostSend(uint32_t handle, bool frames, const std::vector<uint8_t>& umad) {
  transport::MadFrameHeader h;
  h.kind = transport::MadFrameKind::kSend;
  h.handle = handle;
  h.addr = ToFrame(HeaderOf(umad).addr);
  if (frames) {
    link_.PostMad(h, umad.data() + kUmadHeaderBytes, umad.size() - kUmadHeaderBytes);
    return;
  }
  ToFabric msg;
  ibemu::umad::Send* send = msg.mutable_send();
  send->set_handle(handle);
  send->set_mad(umad.data() + kUmadHeaderBytes, umad.size() - kUmadHeaderBytes);
  transport::ToProto(h.addr, send->mutable_addr());
  link_.Post(msg);
}

void Host::WakeIoIfSoonerLocked() {
  std::optional<Clock::time_point> next = NextDeadlineLocked();
  if (next && *next < io_waits_until_) {
    io_waits_until_ = *next;
    link_.Wake();
  }
}

void Host::PostWire(const UmadFile& file, const WireMads& wire) {
  for (const auto& umad : wire) PostSend(file.handle, file.frames, umad);
}

int Host::Send(int fd, uint32_t agent_id, const uint8_t* umad, int length, int timeout_ms,
               int retries) {
  // ib_umad_write(): at least the common and RMPP headers.
  if (length < static_cast<int>(kRmppHeaderEnd)) return -EINVAL;
  std::unique_lock lock(mu_);
  UmadFile* file = FindLocked(fd);
  if (!file) return -EBADF;
  const Agent* agent = file->agents.Find(agent_id);
  if (!agent) return -EINVAL;
  const ConstMadView caller{umad + kUmadHeaderBytes};
  // ib_post_send_mad(): an RMPP agent sends RMPP classes only. With the Active flag set in the
  // MAD, an agent doing kernel RMPP has the message segmented; anything else must fit one MAD.
  const bool kernel_rmpp = agent->KernelRmpp();
  if (kernel_rmpp && !IsRmppClass(caller.mgmt_class())) return -EINVAL;
  const bool rmpp_active = kernel_rmpp && RmppHeader::Read(umad + kUmadHeaderBytes).active();
  if (!rmpp_active && length > kMadBytes) return -EINVAL;

  // The MAD goes out in a zeroed buffer of at least one MAD, as the kernel's send buffer is. A
  // single MAD to a fabric that takes frames is built as its frame at once, in this thread's
  // buffer, and copied once more only when it must be kept for a retry.
  const bool framed = file->frames && !rmpp_active;
  std::vector<uint8_t> sent;
  std::string* frame = nullptr;
  uint8_t* mad;
  if (framed) {
    ib_user_mad hdr;
    std::memcpy(&hdr, umad, sizeof hdr);
    transport::MadFrameHeader h;
    h.kind = transport::MadFrameKind::kSend;
    h.handle = file->handle;
    h.addr = ToFrame(hdr.addr);
    frame = &FabricLink::EncodeMad(h, umad + kUmadHeaderBytes, static_cast<size_t>(length));
    frame->resize(sizeof h + kMadBytes);  // length <= kMadBytes here; the rest zeroes
    mad = reinterpret_cast<uint8_t*>(frame->data()) + sizeof h;
  } else {
    sent.assign(kUmadHeaderBytes + std::max<size_t>(kMadBytes, static_cast<size_t>(length)), 0);
    std::memcpy(sent.data(), umad, kUmadHeaderBytes + static_cast<size_t>(length));
    mad = sent.data() + kUmadHeaderBytes;
  }
  MadView view{mad};
  if (StampsTid(view.method()))
    view.set_tid(uint64_t{agent->hi_tid} << 32 | (view.tid() & 0xFFFFFFFFu));
  HOST_TRACE(
      "fd %d agent %u class 0x%x method 0x%x attr 0x%x tid 0x%016llx length %d%s timeout %d "
      "retries %d",
      fd, agent_id, view.mgmt_class(), view.method(), view.attr_id(),
      static_cast<unsigned long long>(view.tid()), length, rmpp_active ? " (RMPP)" : "", timeout_ms,
      retries);

  if (rmpp_active) {
    sent.resize(kUmadHeaderBytes + static_cast<size_t>(length));
    WireMads wire;
    int r = file->rmpp_sends.Start(agent_id, agent->req.rmpp_version, std::move(sent), timeout_ms,
                                   retries, !IsResponseMad(view.method()), Clock::now(), wire);
    PostWire(*file, wire);
    WakeIoIfSoonerLocked();  // the ACK timer
    return r;
  }

  if (timeout_ms > 0 && !IsResponseMad(view.method())) {
    Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    file->sends.Add([&](OutstandingSend& track) {
      track.agent_id = agent_id;
      track.tid = view.tid();
      track.mgmt_class = view.mgmt_class();
      if (framed) {
        track.umad.assign(umad, umad + kUmadHeaderBytes);  // a finished request's buffer
        track.umad.insert(track.umad.end(), mad, mad + kMadBytes);
      } else {
        track.umad = sent;
      }
      track.timeout = std::chrono::milliseconds(timeout_ms);
      track.retries_left = std::max(retries, 0);
      track.deadline = deadline;
    });
    // The response timer: the other deadlines are no sooner than where the I/O thread waits
    // until, so only this one can be sooner (WakeIoIfSoonerLocked, without a look at them all).
    if (deadline < io_waits_until_) {
      io_waits_until_ = deadline;
      link_.Wake();
    }
  }
  // The send itself goes out after the lock is let go: it wakes the fabric, which took several
  // microseconds under the lock, and OpenSM's receiving thread, which needs the lock for every
  // answer, waited on it (a futex wait and wake a MAD on both threads). Two threads' sends may
  // then reach the fabric in either order, as two writes to a umad file may.
  const uint32_t handle = file->handle;
  lock.unlock();
  if (framed)
    link_.PostEncoded(*frame);
  else
    PostSend(handle, false, sent);
  return 0;
}

namespace {
// The umad file whose umad_recv this thread is in, while it takes messages from the fabric:
// what arrives for that file is taken by the same call right after, so its eventfd is not
// signalled and cleared again for it (two system calls a MAD on the receiving thread of an SM,
// which every answer passes through).
thread_local int t_receiving_fd = -1;
}  // namespace

void Host::SyncSignalLocked(UmadFile& file) {
  if (file.signaled == !file.queue.empty()) return;
  uint64_t count = 1;
  [[maybe_unused]] ssize_t n =
      file.signaled ? read(file.fd, &count, sizeof count) : write(file.fd, &count, sizeof count);
  file.signaled = !file.signaled;
}

void Host::Push(UmadFile& file, std::vector<uint8_t> record) {
  file.queue.push_back(std::move(record));
  if (file.fd != t_receiving_fd) SyncSignalLocked(file);
}

int Host::Recv(int fd, uint8_t* umad, int* length, int timeout_ms) {
  // An SM's receiving thread waits without a timeout: no clock read for it (a vDSO call of
  // about 150 ns on this host's virtual clock, on every MAD).
  const auto deadline =
      timeout_ms > 0 ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point{};
  bool looked = false;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      UmadFile* file = FindLocked(fd);
      if (!file) {
        errno = EBADF;
        return -EBADF;
      }
      if (!file->queue.empty()) {
        // A MAD taken off the queue is returned: no cancellation point (the eventfd's read or
        // write) may end the thread between the two. Held off only here: the first look of a
        // waiting receiver finds the queue empty.
        NoCancel no_cancel;
        std::vector<uint8_t>& rec = file->queue.front();
        const int mad_len = static_cast<int>(rec.size() - kUmadHeaderBytes);
        if (mad_len > *length) {
          // Too small: like the kernel with an RMPP message, hand over the header and what fits
          // and keep the MAD, so the caller can retry with a buffer of *length bytes.
          std::memcpy(umad, rec.data(),
                      kUmadHeaderBytes + static_cast<size_t>(std::max(*length, 0)));
          *length = mad_len;
          SyncSignalLocked(*file);  // it stays queued: readable for poll() too
          errno = ENOSPC;
          return -ENOSPC;
        }
        std::memcpy(umad, rec.data(), rec.size());
        *length = mad_len;
        const int agent = static_cast<int>(HeaderOf(rec).agent_id);
        if (spare_records_.size() < kSpareRecords && rec.capacity() <= kSpareRecordBytes)
          spare_records_.push_back(std::move(rec));
        file->queue.pop_front();
        SyncSignalLocked(*file);  // for other readers of the file, and poll()
        return agent;
      }
    }
    // Timeout 0 still takes in what has arrived once: the answers after the one a blocking call
    // took wait on the socket, where the kernel would have queued them on the file already.
    if (timeout_ms == 0 && looked) {
      errno = EAGAIN;
      return -EAGAIN;
    }
    // With timeout 0, nothing having come in still means one more look at the queue.
    if (int r = WaitForInput(fd, deadline, timeout_ms, true); r < 0 && timeout_ms != 0) return r;
    looked = true;
  }
}

int Host::Poll(int fd, int timeout_ms) {
  const auto deadline =
      timeout_ms > 0 ? Clock::now() + std::chrono::milliseconds(timeout_ms) : Clock::time_point{};
  bool looked = false;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      UmadFile* file = FindLocked(fd);
      // Not a umad file of ours: poll it as libibumad does any descriptor. Closed while we
      // waited: the descriptor was invalid, which poll() reports as an event (POLLNVAL).
      if (!file && looked) return 0;
      if (!file) break;
      if (!file->queue.empty()) return 0;
    }
    if (timeout_ms == 0 && looked) return -ETIMEDOUT;
    if (int r = WaitForInput(fd, deadline, timeout_ms, false); r < 0) return r;
    looked = true;
  }
  struct pollfd pfd = {fd, POLLIN, 0};
  int n = poll(&pfd, 1, timeout_ms);
  if (n == 1) return 0;
  return n == 0 ? -ETIMEDOUT : -EIO;
}

int Host::WaitForInput(int fd, Clock::time_point deadline, int timeout_ms, bool taking_for_fd) {
  struct Taking {
    explicit Taking(int f) { t_receiving_fd = f; }
    ~Taking() { t_receiving_fd = -1; }
  };
  if (timeout_ms == 0) {
    // Everything that has arrived, as the kernel would have queued it on the files already:
    // the first message may be for another file, or one that nobody takes.
    Taking taking(taking_for_fd ? fd : -1);
    return link_.TryReceive() > 0 ? 0 : -ETIMEDOUT;
  }
  int wait_ms = -1;
  if (timeout_ms > 0) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      errno = ETIMEDOUT;
      return -ETIMEDOUT;
    }
    wait_ms = static_cast<int>(left);
  }
  // Blocking without a lock held: poll() is a cancellation point, and OpenSM stops its
  // receiver thread with pthread_cancel (which unwinds through the guard).
  struct Receiving {
    FabricLink& link;
    int fd;
    explicit Receiving(FabricLink& l) : link(l), fd(l.BeginReceiving()) {}
    ~Receiving() { link.EndReceiving(fd); }
  } receiving(link_);
  struct pollfd pfd[2] = {{fd, POLLIN, 0}, {receiving.fd, POLLIN, 0}};
  int n = poll(pfd, receiving.fd >= 0 ? 2 : 1, wait_ms);
  if (n < 0) return -EIO;
  if (n == 0) {
    errno = ETIMEDOUT;
    return -ETIMEDOUT;
  }
  // What arrived goes to its file (this one's, or another's) before the queue is looked at.
  if (pfd[1].revents) {
    Taking taking(taking_for_fd ? fd : -1);
    // One message: what follows stays readable on the socket for the next call, so the socket
    // is not read once more to find it empty, and a second answer taken now is not signalled
    // on the umad file only to be read by the next call. When another thread holds the link's
    // receiving side (the I/O thread, on its timers or a wake-up), wait for it to let go: the
    // socket stays readable until someone reads it, and looking again at once only spun (3,000
    // turns in one OpenSM sweep, each a poll and two locks).
    if (link_.TryReceive(1) < 0) link_.AwaitReceiver();
  }
  return 0;
}

void Host::OnFabricMessage(const FromFabric& msg) {
  if (msg.has_attached()) {
    // The answer to an Attach sent again after a reconnection: the fabric may be another build.
    if (!msg.attached().ok()) {
      Warn("attach", "the fabric refused handle %u: %s", msg.attached().handle(),
           msg.attached().error().c_str());
      return;
    }
    std::lock_guard lock(mu_);
    if (auto it = by_handle_.find(msg.attached().handle()); it != by_handle_.end())
      it->second->frames = msg.attached().mad_frames();
    return;
  }
  if (!msg.has_receive()) return;
  const Receive& r = msg.receive();
  ReceiveMad(r.handle(), FromFrame(transport::FromProto(r.addr())),
             reinterpret_cast<const uint8_t*>(r.mad().data()), r.mad().size());
}

void Host::OnFabricMad(const transport::MadFrameHeader& h, const uint8_t* mad, size_t len) {
  ReceiveMad(h.handle, FromFrame(h.addr), mad, len);
}

void Host::ReceiveMad(uint32_t handle, const ib_mad_addr_t& from, const uint8_t* bytes,
                      size_t len) {
  if (len < kMadHeaderBytes) return;
  std::lock_guard lock(mu_);
  auto it = by_handle_.find(handle);
  if (it == by_handle_.end()) return;
  UmadFile& file = *it->second;
  const ConstMadView view{bytes};
  const Agent* agent = nullptr;
  if (IsResponseMad(view.method())) {
    agent = file.agents.ForHiTid(static_cast<uint32_t>(view.tid() >> 32));
  } else {
    uint32_t oui = IsVendorRange2(view.mgmt_class()) && len >= 40 ? view.vendor_oui() : 0;
    agent = file.agents.ForRequest(view.mgmt_class(), view.class_version(), view.method(), oui);
  }
  if (!agent) {
    HOST_TRACE("no agent for class 0x%x method 0x%x tid 0x%016llx: dropped", view.mgmt_class(),
               view.method(), static_cast<unsigned long long>(view.tid()));
    return;
  }
  // ib_mad_complete_recv(): RMPP first. Segments, ACKs, STOPs and ABORTs stay here; a whole
  // message carries on like a single MAD. Anything else goes into its record straight from the
  // message it came in.
  std::vector<uint8_t> whole_message;
  if (agent->KernelRmpp() && IsRmppClass(view.mgmt_class()) && len >= kRmppHeaderEnd &&
      RmppHeader::Read(bytes).active()) {
    std::vector<uint8_t> segment(bytes, bytes + len);
    segment.resize(std::max<size_t>(len, kMadBytes), 0);
    auto whole = RmppReceiveLocked(file, *agent, segment.data(), from);
    if (!whole) return;
    whole_message = std::move(*whole);
    bytes = whole_message.data();
    len = whole_message.size();
  }
  // A response goes to the agent that sent the request, and only while that request is
  // outstanding: late duplicates and responses nobody waits for are dropped, as in ib_mad.
  if (IsResponseMad(view.method()) &&
      !file.sends.Complete(agent->id, view.tid(), view.mgmt_class()) &&
      !file.rmpp_sends.CompleteResponse(agent->id, view.tid(), view.mgmt_class())) {
    HOST_TRACE("response tid 0x%016llx: no request outstanding, dropped",
               static_cast<unsigned long long>(view.tid()));
    return;
  }
  std::vector<uint8_t> storage;
  if (!spare_records_.empty()) {
    storage = std::move(spare_records_.back());
    spare_records_.pop_back();
  }
  Push(file, MakeRecord(agent->id, 0, from, bytes, len, std::move(storage)));
}

std::optional<std::vector<uint8_t>> Host::RmppReceiveLocked(UmadFile& file, const Agent& agent,
                                                            const uint8_t* mad,
                                                            const ib_mad_addr_t& from) {
  const RmppHeader h = RmppHeader::Read(mad);
  const auto now = Clock::now();
  WireMads wire;
  std::optional<std::vector<uint8_t>> whole;
  // A protocol error ends the send it belongs to (if any) and draws an ABORT (nack_recv).
  auto abort = [&](uint8_t status) {
    file.rmpp_sends.Abort(agent.id, mad, from);
    RmppHeader reply;
    reply.version = kRmppVersion;
    reply.type = kRmppAbort;
    reply.flags = kRmppActive;
    reply.status = status;
    wire.push_back(RmppReply(mad, from, reply));
  };
  HOST_TRACE("agent %u RMPP type %u flags 0x%x status %u seg %u paylen/newwin %u tid 0x%016llx",
             agent.id, h.type, h.flags, h.status, h.seg_num, h.paylen_newwin,
             static_cast<unsigned long long>(ConstMadView{mad}.tid()));
  if (h.version != kRmppVersion) {
    abort(rmpp_status::kUnv);
  } else if (h.type == kRmppData) {
    whole = file.rmpp_recvs.OnData(agent.id, mad, from, now, wire);
  } else if (h.type == kRmppAck) {
    if (uint8_t status = file.rmpp_sends.OnAck(agent.id, mad, from, now, wire); status != 0)
      abort(status);
  } else if (h.type == kRmppStop) {
    if (h.status != rmpp_status::kResx)
      abort(rmpp_status::kBadStatus);
    else
      file.rmpp_sends.Abort(agent.id, mad, from);
  } else if (h.type == kRmppAbort) {
    if (h.status < rmpp_status::kAbortMin || h.status > rmpp_status::kAbortMax)
      abort(rmpp_status::kBadStatus);
    else
      file.rmpp_sends.Abort(agent.id, mad, from);
  } else {
    abort(rmpp_status::kBadType);
  }
  PostWire(file, wire);
  WakeIoIfSoonerLocked();
  return whole;
}

void Host::OnReconnected() {
  std::lock_guard lock(mu_);
  for (const auto& [fd, file] : files_) {
    ToFabric msg;
    msg.mutable_attach()->set_node(cfg_.node);
    msg.mutable_attach()->set_port(static_cast<uint32_t>(file->portnum));
    msg.mutable_attach()->set_handle(file->handle);
    msg.mutable_attach()->set_mad_frames(true);
    // The fabric may have come back as another build: Send messages, which every build takes,
    // until its Attached says it takes frames.
    file->frames = false;
    link_.Post(msg);
    if (file->issm) PostIsSm(*file, true);
  }
}

std::optional<Clock::time_point> Host::NextDeadline() {
  std::lock_guard lock(mu_);
  std::optional<Clock::time_point> next = NextDeadlineLocked();
  // The I/O thread looks again within kIoHeartbeat even with no timer due, so a timer started
  // later than that (a MAD's timeout is 100 ms or more) needs no wake-up.
  Clock::time_point beat = Clock::now() + kIoHeartbeat;
  if (!next || beat < *next) next = beat;
  io_waits_until_ = *next;
  return next;
}

std::optional<Clock::time_point> Host::NextDeadlineLocked() const {
  std::optional<Clock::time_point> next;
  auto consider = [&](std::optional<Clock::time_point> d) {
    if (d && (!next || *d < *next)) next = d;
  };
  for (const auto& [fd, file] : files_) {
    consider(file->sends.NextDeadline());
    consider(file->rmpp_sends.NextDeadline());
    consider(file->rmpp_recvs.NextDeadline());
  }
  return next;
}

void Host::OnTimers(Clock::time_point now) {
  std::lock_guard lock(mu_);
  for (auto& [fd, file] : files_) {
    std::vector<const OutstandingSend*> resend;
    std::vector<OutstandingSend> expired;
    file->sends.Expire(now, resend, expired);
    for (const OutstandingSend* s : resend) PostSend(file->handle, file->frames, s->umad);
    WireMads wire;
    file->rmpp_sends.Expire(now, wire, expired);
    file->rmpp_recvs.Expire(now, wire);
    PostWire(*file, wire);
    for (const OutstandingSend& s : expired) {
      // ib_umad's send_handler: the request comes back with status ETIMEDOUT, its header as the
      // application wrote it and the MAD's common header (with the TID as sent).
      ib_user_mad hdr = HeaderOf(s.umad);
      auto rec = MakeRecord(s.agent_id, ETIMEDOUT, hdr.addr, s.umad.data() + kUmadHeaderBytes,
                            kMadHeaderBytes);
      auto* out = reinterpret_cast<ib_user_mad*>(rec.data());
      out->timeout_ms = hdr.timeout_ms;
      out->retries = hdr.retries;
      HOST_TRACE("fd %d agent %u tid 0x%016llx timed out", fd, s.agent_id,
                 static_cast<unsigned long long>(s.tid));
      Push(*file, std::move(rec));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// IsSM. On a real host the capability bit is set while a process holds /dev/infiniband/issmN
// open, and OpenSM opens that path with plain open(). Here the path is a regular file; IsSM is
// asserted when the path is handed out and follows the file's opens and closes (inotify) after
// that, so OpenSM's osm_vendor_set_sm(FALSE) - a close() - clears it as on a real host.

namespace {

// An SM killed with SIGKILL cannot remove its issm file; the next one to make one clears those
// whose process is gone, so the run directory does not fill up over many runs.
void RemoveIssmFilesOfDeadProcesses(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  const std::string prefix = "ibemu-issm-";
  while (const dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) != 0) continue;
    long pid = std::atol(name.c_str() + prefix.size());
    if (pid > 0 && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      unlink((dir + "/" + name).c_str());
  }
  closedir(d);
}

}  // namespace

void Host::PostIsSm(const UmadFile& file, bool is_sm) {
  ToFabric msg;
  msg.mutable_issm()->set_handle(file.handle);
  msg.mutable_issm()->set_is_sm(is_sm);
  link_.Post(msg);
}

void Host::AssertIsSmLocked(int portnum, Issm& issm, bool is_sm) {
  issm.asserted = is_sm;
  for (auto& [fd, file] : files_) {
    if (file->portnum != portnum || file->issm == is_sm) continue;
    file->issm = is_sm;
    PostIsSm(*file, is_sm);
  }
}

int Host::IssmPath(const char* ca_name, int portnum, char* path, int max) {
  CaAttributes ca;
  if (int r = Resolve(ca_name, &portnum, &ca); r < 0) return r;
  std::lock_guard lock(mu_);
  Issm& issm = issm_[portnum];
  if (issm.path.empty()) {
    issm.path = cfg_.run_dir.path + "/ibemu-issm-" + std::to_string(getpid()) + "-" +
                std::to_string(portnum);
    RemoveIssmFilesOfDeadProcesses(cfg_.run_dir.path);
    int fd = open(issm.path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      Warn(__func__, "cannot create %s: %s", issm.path.c_str(), std::strerror(errno));
      issm_.erase(portnum);
      return -EIO;
    }
    close(fd);
    {
      std::lock_guard files_lock(Files().mu);
      Files().paths.insert(issm.path);
    }
    if (inotify_fd_ < 0) inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (inotify_fd_ >= 0)
      issm.watch = inotify_add_watch(inotify_fd_, issm.path.c_str(), IN_OPEN | IN_CLOSE);
    link_.Wake();
  }
  if (!issm.asserted) AssertIsSmLocked(portnum, issm, true);
  std::snprintf(path, static_cast<size_t>(std::max(max, 0)), "%s", issm.path.c_str());
  return 0;
}

void Host::OnExtraFd() {
  alignas(struct inotify_event) char buf[4096];
  for (;;) {
    ssize_t n = read(inotify_fd_, buf, sizeof buf);
    if (n <= 0) return;
    std::lock_guard lock(mu_);
    for (char* p = buf; p < buf + n;) {
      auto* ev = reinterpret_cast<struct inotify_event*>(p);
      p += sizeof(struct inotify_event) + ev->len;
      for (auto& [port, issm] : issm_) {
        if (issm.watch != ev->wd) continue;
        if (ev->mask & IN_OPEN) {
          if (++issm.opens == 1 && !issm.asserted) AssertIsSmLocked(port, issm, true);
        } else if (ev->mask & IN_CLOSE) {
          if (issm.opens > 0 && --issm.opens == 0 && issm.asserted)
            AssertIsSmLocked(port, issm, false);
        } else if (ev->mask & IN_IGNORED) {
          issm.watch = -1;
        }
      }
    }
  }
}

void Host::Done() {
  std::lock_guard lock(mu_);
  for (auto& [port, issm] : issm_) {
    AssertIsSmLocked(port, issm, false);
    if (issm.watch >= 0) inotify_rm_watch(inotify_fd_, issm.watch);
    unlink(issm.path.c_str());
    std::lock_guard files_lock(Files().mu);
    Files().paths.erase(issm.path);
  }
  issm_.clear();
}

}  // namespace ibemu::umad
