// What the Linux kernel's ib_umad and ib_mad do for one process, played in the process itself:
// umad files (one per umad_open_port) with their agents, receive queues and outstanding
// requests; agent dispatch by class, version and method mask; response routing by hi_tid;
// timeouts and retries; RMPP segmentation and reassembly for rmpp_version 1 agents; the IsSM
// capability while the issm file is held open. The fabric (FabricLink) is only the wire and the
// HCA.
#pragma once
#include <infiniband/umad.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hostlib/client/fabric_link.h"
#include "hostlib/umad/agent_table.h"
#include "hostlib/umad/ca_info.h"
#include "hostlib/umad/rmpp_receiver.h"
#include "hostlib/umad/rmpp_sender.h"
#include "hostlib/umad/send_tracker.h"

namespace ibemu::umad {

using hostclient::FabricLink;
using hostclient::LinkListener;

// sizeof(struct ib_user_mad): the header with P_Key index, which is all the kernel has offered
// since ABI 5 (IB_USER_MAD_ENABLE_PKEY). umad_size() and umad_get_mad() use it throughout.
constexpr size_t kUmadHeaderBytes = sizeof(struct ib_user_mad);
static_assert(kUmadHeaderBytes == 64);

// One umad_open_port: what /dev/infiniband/umadN is for an open file. `fd` is an eventfd that is
// readable exactly while `queue` is not empty, so the application's poll/select/epoll work.
struct UmadFile {
  int fd = -1;
  uint32_t handle = 0;  // names the attachment to the fabric
  int portnum = 0;
  AgentTable agents;
  SendTracker sends;
  RmppSender rmpp_sends;                   // multi-MAD messages going out
  RmppReceiver rmpp_recvs;                 // and coming in
  std::deque<std::vector<uint8_t>> queue;  // struct ib_user_mad header + MAD, ready to read
  bool signaled = false;                   // the eventfd (fd) reads as ready
  bool issm = false;                       // IsSM asserted through this attachment
  // The fabric takes this attachment's MADs as frames (Attached.mad_frames); an `ibemu up` from
  // before them takes Send messages only.
  bool frames = false;
};

class Host final : public LinkListener {
 public:
  static Host& Get();
  // Tears the process-wide instance down (closing its ports) so that the next call starts from
  // the environment again. For tests only.
  static void ResetForTesting();

  explicit Host(Config cfg);
  ~Host() override;

  // A fresh description of the configured node (LIDs set by an SM show up at once).
  // 0, or -ENODEV when there is no fabric, no IBEMU_UMAD_PORT or no such node.
  int Describe(CaAttributes* ca);
  // libibumad's name resolution: `ca_name` NULL or ours; *portnum 0 picks the port
  // (ResolvePort). -ENODEV for the CA, -EINVAL for the port.
  int Resolve(const char* ca_name, int* portnum, CaAttributes* ca);

  // Return the fd, or -ENODEV / -EINVAL / -EIO like umad_open_port.
  int OpenPort(const char* ca_name, int portnum);
  int ClosePort(int fd);

  // 0, or a negative errno.
  int Register(int fd, const AgentRequest& req, uint32_t* agent_id);
  int Unregister(int fd, uint32_t agent_id);
  // `umad` is the caller's struct ib_user_mad followed by `length` MAD bytes.
  int Send(int fd, uint32_t agent_id, const uint8_t* umad, int length, int timeout_ms, int retries);
  // umad_recv's contract: the agent id, or -ETIMEDOUT, -EAGAIN (timeout 0, nothing queued),
  // -ENOSPC (*length too small: header and what fits copied, *length set to the MAD's length,
  // the MAD stays queued), -EBADF, -EIO (poll failed, errno kept).
  int Recv(int fd, uint8_t* umad, int* length, int timeout_ms);
  // umad_poll's: 0 when a MAD is queued, -ETIMEDOUT, -EIO. It watches the fabric's socket as
  // Recv does, so what arrived is queued without waiting for the I/O thread.
  int Poll(int fd, int timeout_ms);

  int IssmPath(const char* ca_name, int portnum, char* path, int max);
  // umad_done: IsSM released, issm files removed.
  void Done();

  // LinkListener: on the I/O thread, or on a thread in Recv or Poll that took the direct socket's
  // messages in itself (FabricLink::TryReceive); one at a time either way.
  void OnFabricMessage(const FromFabric& msg) override;
  void OnFabricMad(const transport::MadFrameHeader& h, const uint8_t* mad, size_t len) override;
  void OnReconnected() override;
  std::optional<Clock::time_point> NextDeadline() override;
  void OnTimers(Clock::time_point now) override;
  int ExtraFd() override { return inotify_fd_; }
  void OnExtraFd() override;

 private:
  struct Issm {
    std::string path;
    int watch = -1;
    int opens = 0;  // opens of the file seen by inotify and not yet closed
    bool asserted = false;
  };

  bool EnsureLink();
  void Hint(const std::string& why);
  UmadFile* FindLocked(int fd);
  uint32_t NextHiTid();
  // Waits (without mu_) until the umad file or the fabric's socket is readable, and takes one
  // message off the socket; with timeout 0 it does not wait and takes all that has arrived.
  // `taking_for_fd`: the caller pops from the file right after. 0, -ETIMEDOUT or -EIO.
  int WaitForInput(int fd, Clock::time_point deadline, int timeout_ms, bool taking_for_fd);
  void Push(UmadFile& file, std::vector<uint8_t> record);
  // A MAD from the fabric for the umad file with this handle, however it came.
  void ReceiveMad(uint32_t handle, const ib_mad_addr_t& from, const uint8_t* bytes, size_t len);
  // Makes the file's eventfd read as ready exactly while its queue holds a record.
  void SyncSignalLocked(UmadFile& file);
  // Sends a MAD of the umad file with this handle (as a frame when `frames`); with or without mu_
  // held.
  void PostSend(uint32_t handle, bool frames, const std::vector<uint8_t>& umad);
  // After a timer may have been started: wakes the I/O thread only when the earliest timer is
  // now before the one it waits for (a wake-up on every send cost a context switch per MAD).
  void WakeIoIfSoonerLocked();
  std::optional<Clock::time_point> NextDeadlineLocked() const;
  void PostWire(const UmadFile& file, const WireMads& wire);
  // ib_process_rmpp_recv_wc(): an RMPP-active MAD for a kernel-RMPP agent. DATA goes to the
  // reassembly, ACK, STOP and ABORT to the sends; returns the message once it is whole.
  std::optional<std::vector<uint8_t>> RmppReceiveLocked(UmadFile& file, const Agent& agent,
                                                        const uint8_t* mad,
                                                        const ib_mad_addr_t& from);
  void PostIsSm(const UmadFile& file, bool is_sm);
  void AssertIsSmLocked(int portnum, Issm& issm, bool is_sm);

  const Config cfg_;
  FabricLink link_{this};
  std::atomic<bool> hinted_{false};

  std::mutex mu_;  // everything below; taken by application threads and the I/O thread
  // The deadline the I/O thread last took from NextDeadline (max: none), so a new timer wakes it
  // only when it is sooner.
  Clock::time_point io_waits_until_ = Clock::time_point::max();
  static constexpr std::chrono::milliseconds kIoHeartbeat{50};
  std::map<int, std::unique_ptr<UmadFile>> files_;  // by fd
  // Records read out of the queues, their storage kept for the next MADs that come in (a MAD
  // then costs no allocation and no free on the receiving side).
  std::vector<std::vector<uint8_t>> spare_records_;
  static constexpr size_t kSpareRecords = 64;
  static constexpr size_t kSpareRecordBytes = 4096;  // not a whole RMPP message's
  std::map<uint32_t, UmadFile*> by_handle_;
  uint32_t next_handle_ = 1;
  uint32_t next_hi_tid_;
  std::map<int, Issm> issm_;  // by port number
  std::atomic<int> inotify_fd_{-1};
};

}  // namespace ibemu::umad
