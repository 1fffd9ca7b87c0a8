// What the emulated HCA keeps for the verbs programs attached to it (hostlib/verbs): memory
// regions with their keys, and queue pairs with their send and receive queues, the requester's
// and the responder's transport state (IBA 9.7: PSNs, MSN, the unacknowledged window, the ACK
// and RNR timers), and the completions they produce. The numbers are rdma-core's (enum
// ibv_wr_opcode, ibv_wc_status, ibv_wc_opcode, ibv_qp_state), since the HCA reports in them.
#pragma once
#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/link/link_rate.h"

namespace ibemu::hca {

using link::SimTime;

struct Sge {
  uint64_t addr = 0;
  uint32_t length = 0;
  uint32_t lkey = 0;
};

// A program's memory is reached with one process_vm_readv/writev per DMA (host_memory.h), and the
// call costs far more than copying a packet's bytes (docs/performance.md). So the requester reads
// up to this much of a message ahead of segmenting it, and the responder places up to this much
// at once: the bytes of a message's last packet reach memory with it, its last byte last. Each
// call moves the bytes straight between the program and the packets' own payload buffers.
constexpr uint32_t kDmaChunk = 64 << 10;

// Payloads that arrived and were checked, waiting to be placed together.
struct Placement {
  std::vector<std::unique_ptr<std::vector<uint8_t>>> payloads;
  uint32_t bytes = 0;

  // A packet's payload buffer (taken from it), or `len` zero bytes when it had none.
  void Add(std::unique_ptr<std::vector<uint8_t>> p, uint32_t len) {
    if (len == 0) return;
    if (!p || p->size() != len) p = std::make_unique<std::vector<uint8_t>>(len);
    bytes += len;
    payloads.push_back(std::move(p));
  }
  // Holds a payload already checked against its destination. Once the message ends or a chunk
  // is held, `place(iovecs, bytes)` writes all that is held in one DMA ending at the destination
  // cursor; its result is returned (true while the bytes are only held).
  template <class Place>
  bool Hold(std::unique_ptr<std::vector<uint8_t>> p, uint32_t len, bool ends, Place place) {
    Add(std::move(p), len);
    if (bytes == 0 || !(ends || bytes >= kDmaChunk)) return true;
    std::vector<iovec> iov;
    iov.reserve(payloads.size());
    for (const auto& q : payloads) iov.push_back({q->data(), q->size()});
    bool placed = place(&iov, bytes);
    Clear();
    return placed;
  }
  void Clear() {
    payloads.clear();
    bytes = 0;
  }
};

struct SendWqe {
  uint64_t wr_id = 0;
  int opcode = 0;  // enum ibv_wr_opcode
  bool signaled = false;
  bool solicited = false;
  bool inlined = false;
  uint32_t imm = 0;
  std::vector<Sge> sges;
  std::string inline_data;
  uint64_t remote_addr = 0;
  uint32_t rkey = 0;
  uint64_t compare_add = 0, swap = 0;
  // UD: the address handle and the destination QP of this WR.
  uint16_t dlid = 0;
  uint8_t sl = 0, src_path_bits = 0;
  uint32_t remote_qpn = 0, remote_qkey = 0;
  // UD: a global address handle's GRH fields (the datagram then carries a GRH).
  bool global = false;
  std::array<uint8_t, 16> dgid{};
  uint32_t flow_label = 0;
  uint8_t sgid_index = 0, hop_limit = 0, traffic_class = 0;
  uint32_t length = 0;  // bytes of the message
  // Requester progress.
  uint32_t first_psn = 0;
  uint32_t sent = 0;      // bytes segmented so far
  uint32_t received = 0;  // READ: response bytes written back
  // Read ahead of segmentation: the payloads of the next packets, staged[staged_next] the one
  // at message offset staged_at (a vector, not a deque: SendWqe must move without throwing).
  std::vector<std::vector<uint8_t>> staged;
  size_t staged_next = 0;
  uint32_t staged_at = 0;
  Placement placing;  // READ: response bytes that arrived, ending at `received`
};

struct RecvWqe {
  uint64_t wr_id = 0;
  std::vector<Sge> sges;
  uint32_t length = 0;  // the SGEs' total
};

struct MemoryRegion {
  uint32_t session = 0;
  pid_t pid = 0;
  uint32_t pd = 0;
  uint64_t addr = 0, length = 0;
  uint32_t access = 0;  // enum ibv_access_flags
  uint32_t lkey = 0, rkey = 0;
};

// ibv_modify_qp's attributes as the transport uses them.
struct VerbsQpAttr {
  uint32_t mask = 0;
  int state = 0;  // enum ibv_qp_state
  int port = 1;
  uint32_t pkey_index = 0;
  uint32_t qkey = 0;
  uint32_t access = 0;
  uint32_t path_mtu = 0;  // enum ibv_mtu
  uint32_t dest_qpn = 0;
  uint32_t rq_psn = 0, sq_psn = 0;
  uint32_t max_rd_atomic = 0, max_dest_rd_atomic = 0;
  uint32_t min_rnr_timer = 0, timeout = 0, retry_cnt = 0, rnr_retry = 0;
  uint16_t dlid = 0;
  uint8_t sl = 0, src_path_bits = 0;
};

struct VerbsCompletion {
  uint32_t qpn = 0;
  bool recv = false;
  uint64_t wr_id = 0;
  int status = 0;  // enum ibv_wc_status
  int opcode = 0;  // enum ibv_wc_opcode
  uint32_t byte_len = 0;
  uint32_t imm = 0;
  uint32_t wc_flags = 0;
  uint32_t src_qp = 0;
  uint16_t slid = 0;
  uint8_t sl = 0;
  bool signaled = false;
  bool solicited = false;
  SimTime timestamp = 0;
};

// Where completions and asynchronous events go: the program that owns the QP
// (emulator/fabric/verbs_requests.cc).
class VerbsClient {
 public:
  virtual ~VerbsClient() = default;
  virtual void Complete(uint32_t session, const VerbsCompletion& c) = 0;
  // An affiliated asynchronous event (enum ibv_event_type) of a QP or an SRQ.
  virtual void AsyncEvent(uint32_t session, int type, uint32_t qpn, uint32_t srq) = 0;
};

// A shared receive queue: receive WRs any of its QPs may take, and the limit that raises
// IBV_EVENT_SRQ_LIMIT_REACHED once when the queue falls below it (IBA 10.2.9.5).
struct VerbsSrq {
  uint32_t session = 0;
  uint32_t pd = 0;
  uint32_t srqn = 0;
  uint32_t max_wr = 0;
  uint32_t limit = 0;  // 0: not armed
  std::deque<RecvWqe> rq;
};

struct VerbsQp {
  uint32_t session = 0;
  pid_t pid = 0;
  uint32_t pd = 0;
  uint32_t qpn = 0;
  int type = 0;  // enum ibv_qp_type
  bool sq_sig_all = false;
  uint32_t max_send_wr = 0, max_recv_wr = 0;
  VerbsQpAttr attr;

  std::deque<SendWqe> sq;        // posted, not yet all segmented (front: being segmented)
  std::deque<SendWqe> inflight;  // segmented, waiting for their ACK or response
  std::deque<RecvWqe> rq;
  uint32_t srq = 0;             // its shared receive queue's number, or 0: its own rq
  uint32_t flow = 0xFFFFFFFFu;  // its results flow (engine::kNoFlow until it is connected)

  // Requester.
  uint32_t npsn = 0;          // next PSN to send
  uint32_t retries_left = 0;  // retry_cnt while no progress
  uint32_t rnr_retries_left = 0;
  uint64_t timer_generation = 0;  // a timer event is live only while its generation is current
  bool retrying = false;          // sent again after a timeout, no progress since
  SimTime rnr_wait_until = 0;     // after an RNR NAK: send nothing before this

  // Responder.
  uint32_t epsn = 0;  // expected PSN
  uint32_t msn = 0;
  bool in_message = false;  // a multi-packet SEND or WRITE is under way
  RecvWqe cur_recv;         // the receive WQE a SEND in progress fills
  bool have_recv = false;
  uint32_t recv_offset = 0;
  uint64_t write_va = 0;  // a WRITE in progress: where the next payload goes
  uint32_t write_left = 0;
  uint32_t write_total = 0;
  uint32_t write_key = 0;
  // SEND or WRITE bytes checked and not yet placed; they end at recv_offset or write_va.
  Placement placing;
  bool nak_sent = false;
  // The last atomics' (PSN, original value), replayed to a duplicate request.
  std::deque<std::pair<uint32_t, uint64_t>>
      atomic_results;  // one PSN sequence error NAK per gap (IBA 9.7.5.1.2)
};

}  // namespace ibemu::hca
