// The transport of verbs programs' QPs (docs/blocks/hca_verbs.md): memory regions and their
// keys; the RC requester (segmentation to the path MTU, PSNs, the unacknowledged window, ACK
// timeout with retry count, RNR wait with its own count, NAKs and the error completions they
// lead to) and the RC responder (expected PSN, duplicates re-acknowledged, sequence errors NAKed
// once, receive WQEs consumed by SENDs, RNR NAK when there is none, R_Key, bounds and access
// checks for RDMA and atomics, MSN); completions to the program that owns the QP. Payload bytes
// come from and go to the programs' memory (host_memory.h) when the HCA would DMA them.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstring>

#include "common/wire/extension_headers.h"
#include "common/wire/opcode.h"
#include "emulator/hca/hca.h"
#include "emulator/hca/host_memory.h"

namespace ibemu::hca {
namespace {

namespace op = wire::opcode;

uint32_t MtuBytes(uint32_t mtu) {
  return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 256;
}

// a - b as a signed 24-bit PSN distance.
int32_t PsnDiff(uint32_t a, uint32_t b) {
  return static_cast<int32_t>(((a - b) & 0xFFFFFF) << 8) >> 8;
}
uint32_t PsnAdd(uint32_t a, uint32_t n) {
  return (a + n) & 0xFFFFFF;
}

// The RNR NAK timer field (IBA table 45) in picoseconds.
SimTime RnrDelay(uint32_t t) {
  static constexpr uint32_t kUs[32] = {
      655360, 10,    20,    30,    40,    60,     80,     120,    160,    240,   320,
      480,    640,   960,   1280,  1920,  2560,   3840,   5120,   7680,   10240, 15360,
      20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return SimTime{kUs[t & 31]} * link::kPsPerUs;
}

// Local ACK timeout: 4.096 us * 2^timeout; 0 means none (IBA 9.7.6.1.3).
SimTime AckTimeout(uint32_t t) {
  return t == 0 ? 0 : (SimTime{4096} * 1000) << std::min<uint32_t>(t, 31);
}

uint32_t PacketsOf(const SendWqe& w, uint32_t mtu) {
  if (w.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) return 1;
  return std::max<uint32_t>(1, (w.length + mtu - 1) / mtu);
}

bool IsReadOrAtomic(int opcode) {
  return opcode == IBV_WR_RDMA_READ || opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
         opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

int WcOpcodeOf(int wr_opcode) {
  switch (wr_opcode) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ:
      return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return IBV_WC_FETCH_ADD;
    default:
      return IBV_WC_SEND;
  }
}

// The requester's status for a NAK code (IBA 9.7.5.2.8 and table 43).
int NakStatus(uint8_t code) {
  switch (code) {
    case wire::aeth::kInvalidRequest:
      return IBV_WC_REM_INV_REQ_ERR;
    case wire::aeth::kRemoteAccessError:
      return IBV_WC_REM_ACCESS_ERR;
    default:
      return IBV_WC_REM_OP_ERR;
  }
}

// Buffers for the payloads of the packets that carry a message's bytes from `offset`, one per
// packet of `seg` bytes (the last shorter) and at most kDmaChunk in all (at least one packet):
// what one DMA fills, so that each packet then takes its buffer without a copy. Returns the
// buffers as iovecs and their total in *total.
std::vector<iovec> StagePackets(uint32_t offset, uint32_t length, uint32_t seg,
                                std::vector<std::vector<uint8_t>>* bufs, uint32_t* total) {
  bufs->clear();
  std::vector<iovec> into;
  *total = 0;
  for (uint32_t at = offset; at < length;) {
    uint32_t size = std::min(seg, length - at);
    if (*total > 0 && *total + size > kDmaChunk) break;
    std::vector<uint8_t>& b = bufs->emplace_back(size);
    into.push_back({b.data(), size});
    *total += size;
    at += size;
  }
  return into;
}

bool InRegion(const MemoryRegion* mr, uint64_t addr, uint64_t n) {
  return mr && addr >= mr->addr && addr + n >= addr && addr + n <= mr->addr + mr->length;
}

uint8_t* Ext(Packet* pkt) {
  return pkt->hdr.data() + wire::kLrhBytes + pkt->grh_bytes() + wire::kBthBytes;
}

}  // namespace

// ---- Resources ----

int Hca::RegMr(const MemoryRegion& mr, uint32_t* lkey, uint32_t* rkey) {
  // Registration pins the pages: a range the program has not mapped is EFAULT, as from the
  // kernel.
  uint8_t probe;
  iovec one{&probe, 1};
  if (mr.length == 0 || !HostRead(mr.pid, mr.addr, &one, 1) ||
      !HostRead(mr.pid, mr.addr + mr.length - 1, &one, 1))
    return EFAULT;
  MemoryRegion m = mr;
  m.lkey = m.rkey = next_key_;
  // The low byte of a key is the consumer's to vary; ours is the region's index.
  next_key_ += 0x100;
  mrs_[m.lkey] = m;
  *lkey = m.lkey;
  *rkey = m.rkey;
  return 0;
}

int Hca::DeregMr(uint32_t session, uint32_t lkey) {
  auto it = mrs_.find(lkey);
  if (it == mrs_.end() || it->second.session != session) return EINVAL;
  mrs_.erase(it);
  return 0;
}

int Hca::CreateVerbsQp(uint32_t session, pid_t pid, uint32_t pd, int type, bool sq_sig_all,
                       uint32_t max_send_wr, uint32_t max_recv_wr, uint32_t srq, uint32_t* qpn) {
  if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD) return EOPNOTSUPP;
  if (max_send_wr > kMaxVerbsWr || max_recv_wr > kMaxVerbsWr) return EINVAL;
  if (srq) {
    VerbsSrq* s = SrqOf(srq);
    if (!s || s->session != session) return EINVAL;
  }
  uint32_t qi = static_cast<uint32_t>(qps_.size());
  if (kVerbsQpnBase + qi > 0xFFFFFF) return ENOMEM;
  auto q = std::make_unique<VerbsQp>();
  q->session = session;
  q->pid = pid;
  q->pd = pd;
  q->qpn = kVerbsQpnBase + qi;
  q->type = type;
  q->sq_sig_all = sq_sig_all;
  q->max_send_wr = max_send_wr;
  q->max_recv_wr = max_recv_wr;
  q->srq = srq;
  q->attr.state = IBV_QPS_RESET;
  QueuePair qp;
  qp.source = UINT32_MAX;
  qp.qpn = q->qpn;
  qp.verbs = q.get();
  qps_.push_back(qp);
  if (verbs_qps_.size() < qps_.size()) verbs_qps_.resize(qps_.size());
  verbs_qps_[qi] = std::move(q);
  *qpn = kVerbsQpnBase + qi;
  return 0;
}

VerbsQp* Hca::VerbsQpOf(uint32_t qpn, uint32_t* qi) {
  if (qpn < kVerbsQpnBase) return nullptr;
  uint32_t i = qpn - kVerbsQpnBase;
  if (i >= verbs_qps_.size()) return nullptr;
  if (qi) *qi = i;
  return verbs_qps_[i].get();
}

int Hca::ModifyVerbsQp(uint32_t session, uint32_t qpn, const VerbsQpAttr& a, SimTime at) {
  uint32_t qi;
  VerbsQp* q = VerbsQpOf(qpn, &qi);
  if (!q || q->session != session) return EINVAL;
  if (a.mask & IBV_QP_PORT && (a.port < 1 || a.port > num_ports())) return EINVAL;
  int port = a.mask & IBV_QP_PORT ? a.port : q->attr.port;
  // A P_Key index must name a valid entry of the port's table (IBA 10.9.2): an SM that did not
  // put the partition there keeps the QP from being brought up.
  if (a.mask & IBV_QP_PKEY_INDEX && (a.pkey_index >= port_mgmt_[port].pkeys.size() ||
                                     !(port_mgmt_[port].pkeys[a.pkey_index] & 0x7FFF)))
    return EINVAL;
  VerbsQpAttr& s = q->attr;
  uint32_t m = a.mask;
  if (m & IBV_QP_PORT) s.port = a.port;
  if (m & IBV_QP_PKEY_INDEX) s.pkey_index = a.pkey_index;
  if (m & IBV_QP_QKEY) s.qkey = a.qkey;
  if (m & IBV_QP_ACCESS_FLAGS) s.access = a.access;
  if (m & IBV_QP_PATH_MTU) s.path_mtu = a.path_mtu;
  if (m & IBV_QP_DEST_QPN) s.dest_qpn = a.dest_qpn;
  if (m & IBV_QP_RQ_PSN) {
    s.rq_psn = a.rq_psn & 0xFFFFFF;
    q->epsn = s.rq_psn;
  }
  if (m & IBV_QP_SQ_PSN) {
    s.sq_psn = a.sq_psn & 0xFFFFFF;
    q->npsn = s.sq_psn;
  }
  if (m & IBV_QP_MAX_QP_RD_ATOMIC) s.max_rd_atomic = a.max_rd_atomic;
  if (m & IBV_QP_MAX_DEST_RD_ATOMIC) s.max_dest_rd_atomic = a.max_dest_rd_atomic;
  if (m & IBV_QP_MIN_RNR_TIMER) s.min_rnr_timer = a.min_rnr_timer;
  if (m & IBV_QP_TIMEOUT) s.timeout = a.timeout;
  if (m & IBV_QP_RETRY_CNT) s.retry_cnt = q->retries_left = a.retry_cnt;
  if (m & IBV_QP_RNR_RETRY) s.rnr_retry = q->rnr_retries_left = a.rnr_retry;
  if (m & IBV_QP_AV) {
    s.dlid = a.dlid;
    s.sl = a.sl;
    s.src_path_bits = a.src_path_bits;
  }
  if (m & IBV_QP_STATE) {
    int from = s.state;
    s.state = a.state;
    if (a.state == IBV_QPS_RESET) {
      // Reset forgets everything queued, without completions (IBA 10.3.1.1).
      q->sq.clear();
      q->inflight.clear();
      q->rq.clear();
      q->in_message = q->have_recv = false;
      q->placing.Clear();
      ++q->timer_generation;
    } else if (a.state == IBV_QPS_ERR && from != IBV_QPS_ERR) {
      s.state = IBV_QPS_RTS;  // VerbsError moves it and flushes
      VerbsError(*q, qi);
    }
  }
  // Work posted before RTS waits for it.
  Post(id(), std::max(at, now()), kVerbsKick, 0, qi);
  return 0;
}

int Hca::DestroyVerbsQp(uint32_t session, uint32_t qpn) {
  uint32_t qi;
  VerbsQp* q = VerbsQpOf(qpn, &qi);
  if (!q || q->session != session) return EINVAL;
  QueuePair& qp = qps_[qi];
  if (qp.in_ring) LeaveRing(q->attr.port, sl2vl_[q->attr.port][q->attr.sl], qi);
  qp.verbs = nullptr;
  verbs_qps_[qi].reset();
  return 0;
}

void Hca::CloseVerbsSession(uint32_t session) {
  for (VerbsQp* q : [&] {
         std::vector<VerbsQp*> v;
         for (auto& p : verbs_qps_)
           if (p && p->session == session) v.push_back(p.get());
         return v;
       }())
    DestroyVerbsQp(session, q->qpn);
  std::erase_if(mrs_, [&](const auto& kv) { return kv.second.session == session; });
}

void Hca::PostVerbsSend(uint32_t session, uint32_t qpn, std::vector<SendWqe> wqes, SimTime at) {
  uint32_t qi;
  VerbsQp* q = VerbsQpOf(qpn, &qi);
  if (!q || q->session != session) return;
  for (SendWqe& w : wqes) {
    // The library never posts beyond the queue's depth; a client that does loses the excess.
    if (q->sq.size() + q->inflight.size() >= q->max_send_wr) break;
    w.signaled = w.signaled || q->sq_sig_all;
    q->sq.push_back(std::move(w));
  }
  Post(id(), std::max(at, now()), kVerbsKick, 0, qi);
}

void Hca::PostVerbsRecv(uint32_t session, uint32_t qpn, std::vector<RecvWqe> wqes, SimTime at) {
  uint32_t qi;
  VerbsQp* q = VerbsQpOf(qpn, &qi);
  if (!q || q->session != session) return;
  for (RecvWqe& r : wqes) {
    if (q->rq.size() >= q->max_recv_wr) break;
    q->rq.push_back(std::move(r));
  }
  if (q->attr.state == IBV_QPS_ERR) Post(id(), std::max(at, now()), kVerbsKick, 0, qi);
}

VerbsSrq* Hca::SrqOf(uint32_t srqn) {
  if (srqn < kSrqBase || srqn - kSrqBase >= srqs_.size()) return nullptr;
  return srqs_[srqn - kSrqBase].get();
}

int Hca::CreateSrq(uint32_t session, uint32_t pd, uint32_t max_wr, uint32_t limit, uint32_t* srqn) {
  if (max_wr == 0 || max_wr > kMaxVerbsWr || limit > max_wr) return EINVAL;
  auto s = std::make_unique<VerbsSrq>();
  s->session = session;
  s->pd = pd;
  s->srqn = kSrqBase + static_cast<uint32_t>(srqs_.size());
  s->max_wr = max_wr;
  s->limit = limit;
  *srqn = s->srqn;
  srqs_.push_back(std::move(s));
  return 0;
}

int Hca::ModifySrq(uint32_t session, uint32_t srqn, uint32_t mask, uint32_t max_wr,
                   uint32_t limit) {
  VerbsSrq* s = SrqOf(srqn);
  if (!s || s->session != session) return EINVAL;
  uint32_t new_max = mask & IBV_SRQ_MAX_WR ? max_wr : s->max_wr;
  if (new_max == 0 || new_max > kMaxVerbsWr || new_max < s->rq.size()) return EINVAL;
  if (mask & IBV_SRQ_LIMIT && limit > new_max) return EINVAL;
  s->max_wr = new_max;
  if (mask & IBV_SRQ_LIMIT) s->limit = limit;  // arms (or, with 0, disarms) the event
  return 0;
}

int Hca::DestroySrq(uint32_t session, uint32_t srqn) {
  VerbsSrq* s = SrqOf(srqn);
  if (!s || s->session != session) return EINVAL;
  for (auto& q : verbs_qps_)
    if (q && q->srq == srqn) return EBUSY;  // a QP still uses it
  srqs_[srqn - kSrqBase].reset();
  return 0;
}

void Hca::PostSrqRecv(uint32_t session, uint32_t srqn, std::vector<RecvWqe> wqes) {
  VerbsSrq* s = SrqOf(srqn);
  if (!s || s->session != session) return;
  for (RecvWqe& r : wqes) {
    if (s->rq.size() >= s->max_wr) break;
    s->rq.push_back(std::move(r));
  }
}

bool Hca::TakeRecv(VerbsQp& q, RecvWqe* out) {
  if (!q.srq) {
    if (q.rq.empty()) return false;
    *out = std::move(q.rq.front());
    q.rq.pop_front();
    return true;
  }
  VerbsSrq* s = SrqOf(q.srq);
  if (!s || s->rq.empty()) return false;
  *out = std::move(s->rq.front());
  s->rq.pop_front();
  if (s->limit && s->rq.size() < s->limit) {
    s->limit = 0;  // one event per arming
    if (verbs_client_)
      verbs_client_->AsyncEvent(s->session, IBV_EVENT_SRQ_LIMIT_REACHED, 0, s->srqn);
  }
  return true;
}

void Hca::ReturnRecv(VerbsQp& q) {
  if (!q.have_recv) return;
  VerbsSrq* s = q.srq ? SrqOf(q.srq) : nullptr;
  if (s)
    s->rq.push_front(std::move(q.cur_recv));
  else if (!q.srq)
    q.rq.push_front(std::move(q.cur_recv));
  q.have_recv = false;
}

uint8_t Hca::NextSl(const VerbsQp& q) const {
  return q.type == IBV_QPT_UD && !q.sq.empty() ? q.sq.front().sl : q.attr.sl;
}

const MemoryRegion* Hca::FindMr(uint32_t key, bool remote) const {
  for (const auto& [lkey, mr] : mrs_)
    if ((remote ? mr.rkey : mr.lkey) == key) return &mr;
  return nullptr;
}

const MemoryRegion* Hca::Region(const VerbsQp& q, uint32_t key, bool remote, uint32_t access,
                                uint64_t addr, uint64_t n, bool bounds) const {
  const MemoryRegion* mr = FindMr(key, remote);
  if (!mr || mr->pd != q.pd || mr->session != q.session || (mr->access & access) != access)
    return nullptr;
  // A remote operation needs the responder QP's permission as well as the region's.
  if (remote && (q.attr.access & access) != access) return nullptr;
  return !bounds || InRegion(mr, addr, n) ? mr : nullptr;
}

bool Hca::VerbsDma(const VerbsQp& q, uint32_t key, bool remote, uint32_t access, uint64_t addr,
                   const std::vector<iovec>* local, size_t n, bool write) {
  // Moving nothing touches no memory: only the key and the permissions are checked.
  const MemoryRegion* mr = Region(q, key, remote, access, addr, n, n > 0);
  if (!mr) return false;
  if (n == 0 || !local) return true;
  int count = static_cast<int>(local->size());
  return write ? HostWrite(mr->pid, addr, local->data(), count)
               : HostRead(mr->pid, addr, local->data(), count);
}

bool Hca::VerbsDma(const VerbsQp& q, uint32_t key, bool remote, uint32_t access, uint64_t addr,
                   void* buf, size_t n, bool write) {
  std::vector<iovec> one{{buf, n}};
  return VerbsDma(q, key, remote, access, addr, buf ? &one : nullptr, n, write);
}

bool Hca::GatherSend(const VerbsQp& q, SendWqe& w, uint32_t offset, uint32_t n,
                     std::vector<uint8_t>* out) {
  if (w.inlined || n == 0) {  // a message of no bytes has one packet of none
    out->assign(w.inline_data.begin() + offset, w.inline_data.begin() + offset + n);
    return true;
  }
  if (w.staged_next >= w.staged.size() || w.staged_at != offset ||
      w.staged[w.staged_next].size() != n) {
    // Read the next packets' payloads, up to kDmaChunk, into buffers of their own.
    uint32_t seg = q.type == IBV_QPT_UD ? n : std::max(n, MtuBytes(q.attr.path_mtu));
    uint32_t total;
    std::vector<iovec> into = StagePackets(offset, w.length, seg, &w.staged, &total);
    w.staged_next = 0;
    w.staged_at = offset;
    if (!Gather(q, w.sges, offset, total, into)) {
      // Something beyond this packet cannot be read: the error belongs to the packet that
      // reaches it, so this one is read on its own.
      w.staged.clear();
      out->resize(n);
      return Gather(q, w.sges, offset, n, {{out->data(), n}});
    }
  }
  *out = std::move(w.staged[w.staged_next++]);
  w.staged_at = offset + n;
  if (w.staged_next == w.staged.size()) {
    w.staged.clear();
    w.staged_next = 0;
  }
  return true;
}

bool Hca::Gather(const VerbsQp& q, const std::vector<Sge>& sges, uint32_t offset, uint32_t n,
                 const std::vector<iovec>& into) {
  uint32_t at = 0, done = 0;
  for (const Sge& s : sges) {
    if (done == n) break;
    if (offset < at + s.length) {
      uint32_t from = offset > at ? offset - at : 0;
      uint32_t take = std::min(s.length - from, n - done);
      std::vector<iovec> part = SliceIovecs(into, done, take);
      if (!VerbsDma(q, s.lkey, false, 0, s.addr + from, &part, take, false)) return false;
      done += take;
      offset += take;
    }
    at += s.length;
  }
  return done == n;
}

bool Hca::Scatter(const VerbsQp& q, const std::vector<Sge>& sges, uint32_t offset,
                  const std::vector<iovec>* data, uint32_t n) {
  uint32_t at = 0, done = 0;
  for (const Sge& s : sges) {
    if (done == n) break;
    if (offset < at + s.length) {
      uint32_t from = offset - at;
      uint32_t take = std::min(s.length - from, n - done);
      std::vector<iovec> part;
      if (data) part = SliceIovecs(*data, done, take);
      if (!VerbsDma(q, s.lkey, false, IBV_ACCESS_LOCAL_WRITE, s.addr + from, data ? &part : nullptr,
                    take, true))
        return false;
      done += take;
      offset += take;
    }
    at += s.length;
  }
  return done == n;
}

// ---- Completions and errors ----

void Hca::CompleteSend(VerbsQp& q, const SendWqe& w, int status) {
  if (!verbs_client_) return;
  VerbsCompletion c;
  c.qpn = q.qpn;
  c.wr_id = w.wr_id;
  c.status = status;
  c.opcode = WcOpcodeOf(w.opcode);
  c.byte_len = w.opcode == IBV_WR_RDMA_READ ? w.length : w.opcode > IBV_WR_RDMA_READ ? 8 : 0;
  // Every error is reported, signaled or not (IBA 10.7.3.1).
  c.signaled = w.signaled || status != IBV_WC_SUCCESS;
  c.timestamp = now();
  verbs_client_->Complete(q.session, c);
}

void Hca::CompleteRecv(VerbsQp& q, const RecvWqe& r, int status, int opcode, uint32_t len,
                       const Packet* pkt) {
  if (!verbs_client_) return;
  VerbsCompletion c;
  c.qpn = q.qpn;
  c.recv = true;
  c.wr_id = r.wr_id;
  c.status = status;
  c.opcode = opcode;
  c.byte_len = len;
  c.src_qp = q.attr.dest_qpn;
  if (pkt) {
    Packet& p = const_cast<Packet&>(*pkt);
    c.slid = p.lrh().slid();
    c.sl = p.lrh().sl();
    c.solicited = p.bth().se();
    op::Info info = op::Describe(p.bth().opcode());
    if (info.deth) c.src_qp = wire::Deth{Ext(&p)}.src_qp();
    if (p.grh_bytes()) c.wc_flags |= IBV_WC_GRH;
    if (info.immdt) {
      uint8_t* e = Ext(&p) + (info.deth ? op::kDethBytes : 0) + (info.reth ? op::kRethBytes : 0);
      c.imm = wire::ImmDt{e}.value();
      c.wc_flags |= IBV_WC_WITH_IMM;
    }
  }
  c.signaled = true;
  c.timestamp = now();
  verbs_client_->Complete(q.session, c);
}

void Hca::VerbsError(VerbsQp& q, uint32_t qi) {
  if (q.attr.state == IBV_QPS_ERR) return;
  q.attr.state = IBV_QPS_ERR;
  ++q.timer_generation;
  for (const SendWqe& w : q.inflight) CompleteSend(q, w, IBV_WC_WR_FLUSH_ERR);
  for (const SendWqe& w : q.sq) CompleteSend(q, w, IBV_WC_WR_FLUSH_ERR);
  if (q.have_recv) CompleteRecv(q, q.cur_recv, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
  // An SRQ's WRs are not the QP's: they stay for the other QPs.
  for (const RecvWqe& r : q.rq) CompleteRecv(q, r, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
  q.inflight.clear();
  q.sq.clear();
  q.rq.clear();
  q.have_recv = q.in_message = false;
  QueuePair& qp = qps_[qi];
  if (qp.in_ring) LeaveRing(q.attr.port, sl2vl_[q.attr.port][q.attr.sl], qi);
}

// ---- Requester ----

bool Hca::VerbsReady(const QueuePair& qp, int p, int vl) const {
  const VerbsQp& q = *qp.verbs;
  // A UD WR carries its own destination; one to LID 0 goes out and is dropped by the fabric.
  if (q.attr.state != IBV_QPS_RTS || q.sq.empty() || q.rnr_wait_until > now() || !port_active(p) ||
      (q.type != IBV_QPT_UD && q.attr.dlid == 0))
    return false;
  const SendWqe& w = q.sq.front();
  uint32_t mtu = MtuBytes(q.attr.path_mtu);
  uint32_t payload = IsReadOrAtomic(w.opcode) ? 0 : std::min(mtu, w.length - w.sent);
  uint32_t wire = wire::kLrhBytes + (w.global ? wire::kGrhBytes : 0) + wire::kBthBytes +
                  op::kRethBytes + op::kImmDtBytes + op::kDethBytes + payload +
                  (4 - payload % 4) % 4 + engine::kIcrcBytes + engine::kVcrcBytes;
  uint32_t blocks = wire::CreditBlocks(wire);
  const link::Port& pt = ports_[p];
  return pt.tx[pt.Slot(vl, 0)].Fits(blocks);
}

Packet* Hca::VerbsPacket(int p, const VerbsQp& q, uint8_t opcode, uint32_t psn, bool ack_req,
                         uint16_t dlid, uint8_t sl, uint32_t dest_qp) {
  Packet* pkt = NewPacket();
  pkt->hdr.fill(0);
  wire::Lrh lrh = pkt->lrh();
  lrh.set_vl(sl2vl_[p][sl]);
  lrh.set_sl(sl);
  lrh.set_lnh(wire::Lnh::kIbaLocal);
  lrh.set_dlid(dlid);
  lrh.set_slid(static_cast<uint16_t>(lid(p) | q.attr.src_path_bits));
  wire::Bth bth = pkt->bth();
  bth.set_opcode(opcode);
  const auto& pkeys = port_mgmt_[p].pkeys;
  bth.set_pkey(q.attr.pkey_index < pkeys.size() ? pkeys[q.attr.pkey_index] : 0xFFFF);
  bth.set_dest_qp(dest_qp);
  // RC requests that carry data ask for an ACK each when congestion control clocks on them.
  bool cc_ack = cc_hooks_ && (opcode & 0xE0) == 0 && (opcode & 0x1F) <= op::kWriteOnlyImm &&
                cc_hooks_->AckEachPacket();
  bth.set_ack_req(ack_req || cc_ack);
  bth.set_psn(psn);
  pkt->hdr_len =
      static_cast<uint8_t>(wire::kLrhBytes + wire::kBthBytes + op::Describe(opcode).ext_bytes());
  pkt->id = NextPacketId();
  pkt->created = pkt->injected = now();
  pkt->flow = q.flow;
  return pkt;
}

void Hca::CountVerbsSent(uint32_t qi, const VerbsQp& q, const Packet& pkt) {
  if (q.flow == engine::kNoFlow) return;
  stats::FlowStats& fs = flows_->flows[q.flow];
  fs.tx_payload.Add(now(), pkt.payload_len);
  ++fs.tx_packets;
  int level = cc_hooks_ ? cc_hooks_->Throttle(*this, qi) : -1;
  if (level >= 0) {
    fs.throttle_sum.Add(now(), level);
    fs.throttle_samples.Add(now(), 1);
  }
}

void Hca::CountVerbsReceived(const Packet& pkt) {
  if (pkt.flow == engine::kNoFlow || pkt.payload_len == 0) return;
  flows_->flows[pkt.flow].Delivered(now(), pkt.payload_len, now() - pkt.created,
                                    const_cast<Packet&>(pkt).bth().fecn());
}

uint32_t Hca::VerbsFlow(uint32_t qpn) {
  VerbsQp* q = VerbsQpOf(qpn);
  return q ? q->flow : engine::kNoFlow;
}

void Hca::SetVerbsFlow(uint32_t qpn, uint32_t flow) {
  if (VerbsQp* q = VerbsQpOf(qpn)) q->flow = flow;
}

void Hca::VerbsFinishPacket(Packet* pkt, std::vector<uint8_t> payload) {
  pkt->payload_len = static_cast<uint32_t>(payload.size());
  if (!payload.empty()) pkt->data = std::make_unique<std::vector<uint8_t>>(std::move(payload));
  pkt->bth().set_pad_cnt(static_cast<uint8_t>(pkt->pad()));
  pkt->lrh().set_pkt_len(pkt->pkt_len_words());
  if (pkt->grh_bytes()) {
    // PayLen: from the BTH through the ICRC.
    wire::Grh{pkt->hdr.data() + wire::kLrhBytes}.set_pay_len(
        static_cast<uint16_t>(pkt->pkt_len_words() * 4 - wire::kLrhBytes - wire::kGrhBytes));
  }
}

void Hca::AddGrh(int p, Packet* pkt, const SendWqe& w) {
  // The BTH and what follows move up by 40 bytes; the LRH says a GRH follows (IBA 8.3, 7.7.5).
  uint8_t* h = pkt->hdr.data();
  std::memmove(h + wire::kLrhBytes + wire::kGrhBytes, h + wire::kLrhBytes,
               pkt->hdr_len - wire::kLrhBytes);
  pkt->hdr_len = static_cast<uint8_t>(pkt->hdr_len + wire::kGrhBytes);
  pkt->lrh().set_lnh(wire::Lnh::kIbaGlobal);
  wire::Grh g{h + wire::kLrhBytes};
  g.set_ip_ver_tclass_flow(w.traffic_class, w.flow_label);
  g.set_next_header(wire::kGrhNextHeaderIba);
  g.set_hop_limit(w.hop_limit);
  // The source GID: the port's subnet prefix and GUID (GID index 0, the only one).
  const mgmt::PortMgmt& pm = port_mgmt_[p];
  uint8_t sgid[16];
  for (int i = 0; i < 8; ++i) {
    sgid[i] = static_cast<uint8_t>(pm.gid_prefix >> (56 - 8 * i));
    sgid[8 + i] = static_cast<uint8_t>(pm.port_guid >> (56 - 8 * i));
  }
  g.set_sgid(sgid);
  g.set_dgid(w.dgid.data());
}

void Hca::VerbsSendData(int p, int vl, uint32_t qi) {
  VerbsQp& q = *qps_[qi].verbs;
  SendWqe& w = q.sq.front();
  if (q.type == IBV_QPT_UD) {
    VerbsUdSend(p, vl, qi);
    return;
  }
  uint32_t mtu = MtuBytes(q.attr.path_mtu);
  uint8_t prefix = q.type == IBV_QPT_UC ? op::kUc : op::kRc;
  bool first = w.sent == 0;
  if (first) w.first_psn = q.npsn;
  uint32_t psn = q.npsn;
  uint8_t opcode;
  uint32_t seg = 0;
  std::vector<uint8_t> payload;
  bool last = true;
  if (IsReadOrAtomic(w.opcode)) {
    opcode = w.opcode == IBV_WR_RDMA_READ              ? op::kReadRequest
             : w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? op::kFetchAdd
                                                       : op::kCompareSwap;
    q.npsn = PsnAdd(q.npsn, PacketsOf(w, mtu));
    w.sent = w.length;
  } else {
    seg = std::min(mtu, w.length - w.sent);
    last = w.sent + seg == w.length;
    bool imm = w.opcode == IBV_WR_SEND_WITH_IMM || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    bool write = w.opcode == IBV_WR_RDMA_WRITE || w.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
    if (write)
      opcode = first ? (last ? (imm ? op::kWriteOnlyImm : op::kWriteOnly) : op::kWriteFirst)
                     : (last ? (imm ? op::kWriteLastImm : op::kWriteLast) : op::kWriteMiddle);
    else
      opcode = first ? (last ? (imm ? op::kSendOnlyImm : op::kSendOnly) : op::kSendFirst)
                     : (last ? (imm ? op::kSendLastImm : op::kSendLast) : op::kSendMiddle);
    if (!GatherSend(q, w, w.sent, seg, &payload)) {
      // The HCA cannot read what the WR names: a local protection error, and the QP fails.
      SendWqe bad = std::move(w);
      q.sq.pop_front();
      CompleteSend(q, bad, IBV_WC_LOC_PROT_ERR);
      VerbsError(q, qi);
      return;
    }
    q.npsn = PsnAdd(q.npsn, 1);
    w.sent += seg;
  }
  opcode |= prefix;
  Packet* pkt = VerbsPacket(p, q, opcode, psn, last && q.type == IBV_QPT_RC, q.attr.dlid, q.attr.sl,
                            q.attr.dest_qpn);
  if (last && w.solicited && (opcode & 0x1F) <= op::kSendOnlyImm) pkt->bth().set_se(true);
  uint8_t* e = Ext(pkt);
  op::Info info = op::Describe(opcode);
  if (info.reth) {
    wire::Reth r{e};
    r.set_va(w.remote_addr);
    r.set_rkey(w.rkey);
    r.set_dma_length(w.length);
    e += op::kRethBytes;
  }
  if (info.atomic_eth) {
    wire::AtomicEth a{e};
    a.set_va(w.remote_addr);
    a.set_rkey(w.rkey);
    a.set_swap_add(w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? w.compare_add : w.swap);
    a.set_compare(w.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD ? 0 : w.compare_add);
  }
  if (info.immdt) wire::ImmDt{e}.set_value(w.imm);
  VerbsFinishPacket(pkt, std::move(payload));
  uint32_t bytes = pkt->wire_bytes();
  if (cc_hooks_) cc_hooks_->OnSent(*this, qi, *pkt);
  CountVerbsSent(qi, q, *pkt);
  Send(p, pkt, vl);
  pstate_[p].vlarb->Charge(vl, bytes);
  dma_free_at_ = std::max(dma_free_at_, now()) + cfg_.host_tx.Time(seg);
  if (w.sent < w.length) return;
  // The whole message is on the wire.
  SendWqe done = std::move(w);
  q.sq.pop_front();
  if (q.type == IBV_QPT_UC) {
    CompleteSend(q, done, IBV_WC_SUCCESS);  // UC: done once sent (IBA 9.8.3)
  } else {
    bool arm = q.inflight.empty();
    q.inflight.push_back(std::move(done));
    if (arm) ArmAckTimer(q, qi);
  }
  if (q.sq.empty()) LeaveRing(p, vl, qi);
}

void Hca::VerbsUdSend(int p, int vl, uint32_t qi) {
  VerbsQp& q = *qps_[qi].verbs;
  SendWqe w = std::move(q.sq.front());
  q.sq.pop_front();
  auto next = [&] {
    // The next WR may go on another VL: the QP waits in that VL's ring instead.
    if (q.sq.empty() || sl2vl_[p][q.sq.front().sl] != vl) {
      LeaveRing(p, vl, qi);
      if (!q.sq.empty()) Post(id(), now(), kVerbsKick, 0, qi);
    }
  };
  // A datagram is one packet: longer than the port's MTU is a local length error (IBA 9.8.4).
  uint32_t mtu = MtuBytes(port_mgmt_[p].neighbor_mtu);
  std::vector<uint8_t> payload;
  if (w.length > mtu || !GatherSend(q, w, 0, w.length, &payload)) {
    CompleteSend(q, w, w.length > mtu ? IBV_WC_LOC_LEN_ERR : IBV_WC_LOC_PROT_ERR);
    VerbsError(q, qi);
    return;
  }
  bool imm = w.opcode == IBV_WR_SEND_WITH_IMM;
  Packet* pkt = VerbsPacket(p, q, op::kUd | (imm ? op::kSendOnlyImm : op::kSendOnly), q.npsn, false,
                            w.dlid, w.sl, w.remote_qpn);
  q.npsn = PsnAdd(q.npsn, 1);
  if (w.global) AddGrh(p, pkt, w);
  if (w.solicited) pkt->bth().set_se(true);
  uint8_t* e = Ext(pkt);
  wire::Deth d{e};
  // A Q_Key with its high bit set means "the QP's own" (IBA 10.2.5).
  d.set_qkey(w.remote_qkey & 0x80000000u ? q.attr.qkey : w.remote_qkey);
  d.set_src_qp(q.qpn);
  if (imm) wire::ImmDt{e + op::kDethBytes}.set_value(w.imm);
  VerbsFinishPacket(pkt, std::move(payload));
  uint32_t bytes = pkt->wire_bytes();
  if (cc_hooks_) cc_hooks_->OnSent(*this, qi, *pkt);
  Send(p, pkt, vl);
  pstate_[p].vlarb->Charge(vl, bytes);
  dma_free_at_ = std::max(dma_free_at_, now()) + cfg_.host_tx.Time(w.length);
  CompleteSend(q, w, IBV_WC_SUCCESS);  // UD: done once sent
  next();
}

void Hca::VerbsUdReceive(int p, VerbsQp& q, Packet* pkt) {
  uint8_t* e = Ext(pkt);
  wire::Deth d{e};
  if (d.qkey() != q.attr.qkey) {
    // Dropped and counted in PortInfo:Q_KeyViolations (IBA 10.2.5, 14.2.5.6).
    ++port_mgmt_[p].q_key_violations;
    return;
  }
  RecvWqe r;
  if (!TakeRecv(q, &r)) return;  // no receive WR: a datagram is simply lost
  uint32_t len = pkt->payload_len;
  const uint8_t* data = pkt->data ? pkt->data->data() : nullptr;
  // The first 40 bytes of the buffer are the GRH's place, written only when one came.
  constexpr uint32_t kGrh = 40;
  if (len + kGrh > r.length) {
    CompleteRecv(q, r, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, len + kGrh, pkt);
    return;
  }
  std::vector<iovec> payload{{const_cast<uint8_t*>(data), len}};
  // A datagram that came with a GRH has it written into those 40 bytes (IBV_WC_GRH).
  std::vector<iovec> grh{{pkt->hdr.data() + wire::kLrhBytes, kGrh}};
  if ((pkt->grh_bytes() && !Scatter(q, r.sges, 0, &grh, kGrh)) ||
      !Scatter(q, r.sges, kGrh, data ? &payload : nullptr, len)) {
    CompleteRecv(q, r, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, pkt);
    return;
  }
  CompleteRecv(q, r, IBV_WC_SUCCESS, IBV_WC_RECV, len + kGrh, pkt);
}

void Hca::ArmAckTimer(VerbsQp& q, uint32_t qi) {
  if (q.inflight.empty())
    ++q.timer_generation;  // nothing to wait for: the running timer is void
  else
    StartAckTimer(q, qi);
}

void Hca::StartAckTimer(VerbsQp& q, uint32_t qi) {
  SimTime t = AckTimeout(q.attr.timeout);
  ++q.timer_generation;
  if (t > 0) Post(id(), now() + t, kVerbsTimer, 0, qi, q.timer_generation);
}

void Hca::VerbsKick(uint32_t qi) {
  VerbsQp* q = qi < verbs_qps_.size() ? verbs_qps_[qi].get() : nullptr;
  if (!q) return;
  if (q->attr.state == IBV_QPS_ERR) {
    // WRs posted to a QP in Error complete at once, flushed.
    for (const SendWqe& w : q->sq) CompleteSend(*q, w, IBV_WC_WR_FLUSH_ERR);
    for (const RecvWqe& r : q->rq)
      CompleteRecv(*q, r, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, nullptr);
    q->sq.clear();
    q->rq.clear();
    return;
  }
  if (q->attr.state != IBV_QPS_RTS || q->sq.empty()) return;
  int p = q->attr.port;
  if (q->rnr_wait_until > now()) return;  // a kick is posted for when the wait ends
  if (!port_active(p)) VerbsPortDown(qi);
  QueuePair& qp = qps_[qi];
  qp.port = static_cast<uint8_t>(p);
  qp.sl = NextSl(*q);
  if (!qp.in_ring) {
    qp.vl = sl2vl_[p][qp.sl];
    pstate_[p].rings[qp.vl].qps.push_back(qi);
    qp.in_ring = true;
  }
  Arbitrate(p);
}

void Hca::Rewind(VerbsQp& q) {
  // Go back N (IBA 9.7.4.1.5): every packet from the oldest unacknowledged one on is sent again
  // with its PSN, so the message being segmented starts over too.
  if (!q.sq.empty() && q.sq.front().sent > 0) {
    q.sq.front().sent = q.sq.front().received = 0;
    q.npsn = q.sq.front().first_psn;
  }
  while (!q.inflight.empty()) {
    SendWqe w = std::move(q.inflight.back());
    q.inflight.pop_back();
    w.sent = w.received = 0;
    q.npsn = w.first_psn;
    q.sq.push_front(std::move(w));
  }
  ++q.timer_generation;
}

void Hca::VerbsPortDown(uint32_t qi) {
  VerbsQp& q = *verbs_qps_[qi];
  // A QP with unacknowledged packets has its timer running already; one whose next WRs were
  // still queued gets one, as if they had gone out into the dead link.
  if (q.attr.state != IBV_QPS_RTS || !q.inflight.empty() || q.sq.empty() || q.retrying) return;
  q.retrying = true;
  StartAckTimer(q, qi);
}

void Hca::VerbsTimer(uint32_t qi, uint64_t generation) {
  VerbsQp* q = qi < verbs_qps_.size() ? verbs_qps_[qi].get() : nullptr;
  // Work sent again after an earlier timeout that could not leave (the port is down) still
  // counts against the retries, so a dead link ends in an error instead of a wait for ever.
  bool waiting = !q || q->inflight.empty() ? q && q->retrying && !q->sq.empty() : true;
  if (!q || generation != q->timer_generation || !waiting || q->attr.state != IBV_QPS_RTS) return;
  if (q->retries_left == 0) {
    std::deque<SendWqe>& from = q->inflight.empty() ? q->sq : q->inflight;
    SendWqe w = std::move(from.front());
    from.pop_front();
    CompleteSend(*q, w, IBV_WC_RETRY_EXC_ERR);
    VerbsError(*q, qi);
    return;
  }
  --q->retries_left;
  Rewind(*q);
  q->retrying = true;
  VerbsKick(qi);
  if (q->inflight.empty()) StartAckTimer(*q, qi);  // nothing went out: the timer runs on
}

// ---- Receive side: requests at the responder, responses at the requester ----

void Hca::VerbsReceive(int p, Packet* pkt) {
  uint32_t qi;
  VerbsQp* q = VerbsQpOf(pkt->bth().dest_qp(), &qi);
  op::Info info = op::Describe(pkt->bth().opcode());
  // A QP that does not exist or cannot receive yet, or a packet of another transport, is
  // dropped silently (IBA 9.6.1.2).
  op::Transport want = q && q->type == IBV_QPT_UD   ? op::Transport::kUd
                       : q && q->type == IBV_QPT_UC ? op::Transport::kUc
                                                    : op::Transport::kRc;
  if (!q || q->attr.state < IBV_QPS_RTR || q->attr.state == IBV_QPS_ERR || info.transport != want) {
    ++ports_[p].stats.dropped_no_route;
    FreePacket(pkt);
    return;
  }
  if (!PKeyAccepted(p, *q, pkt->bth().pkey())) {
    // Dropped and counted in PortInfo:P_KeyViolations (IBA 10.9.3, what ibv_devinfo shows as
    // bad_pkey_cntr).
    ++port_mgmt_[p].p_key_violations;
    FreePacket(pkt);
    return;
  }
  if (q->type == IBV_QPT_UD) {
    VerbsUdReceive(p, *q, pkt);
    FreePacket(pkt);
    return;
  }
  uint8_t o = info.operation;
  if (o == op::kAcknowledge || o == op::kAtomicAcknowledge ||
      (o >= op::kReadResponseFirst && o <= op::kReadResponseOnly)) {
    OnResponse(pkt);
    VerbsResponse(*q, qi, pkt);
  } else {
    VerbsRequest(p, *q, pkt);
  }
  FreePacket(pkt);
}

void Hca::Send(int p, Packet* pkt, int vl) {
  if (port_mgmt_[p].OwnsLid(pkt->lrh().dlid())) {
    // To a QP of this port: the HCA loops it back inside, as HCAs do, without the wire; the
    // host DMA paces it (dma_free_at_ above, and the receive side's here).
    SimTime done = std::max(now(), sink_free_at_) + cfg_.host_rx.Time(pkt->payload_len);
    sink_free_at_ = done;
    Post(id(), done, kVerbsLoopback, static_cast<uint16_t>(p), 0, 0, pkt);
    return;
  }
  Transmit(p, pkt, vl, 0, now());
}

bool Hca::PKeyAccepted(int p, const VerbsQp& q, uint16_t pkey) const {
  // A connected QP takes its own key only; a datagram QP any key of the port's table.
  const mgmt::PortMgmt& pm = port_mgmt_[p];
  if (q.type != IBV_QPT_UD)
    return q.attr.pkey_index < pm.pkeys.size() &&
           mgmt::PortMgmt::PKeyMatches(pm.pkeys[q.attr.pkey_index], pkey);
  return pm.AcceptsPKey(pkey);
}

void Hca::VerbsQueueResponse(int p, Packet* pkt, uint16_t dlid) {
  if (port_mgmt_[p].OwnsLid(dlid)) {
    Send(p, pkt, pkt->lrh().vl());
    return;
  }
  pkt->credit_class = static_cast<uint16_t>(ctx_->CreditClassTo(ports_[p].link.peer_lp, dlid));
  pstate_[p].control.Push(pkt);
  Arbitrate(p);
}

void Hca::VerbsAck(int p, VerbsQp& q, const Packet& request, uint8_t syndrome, uint32_t psn) {
  Packet& r = const_cast<Packet&>(request);
  uint8_t prefix = q.type == IBV_QPT_UC ? op::kUc : op::kRc;
  Packet* ack = VerbsPacket(p, q, prefix | op::kAcknowledge, psn, false, r.lrh().slid(),
                            r.lrh().sl(), q.attr.dest_qpn);
  wire::Aeth a{Ext(ack)};
  a.set_syndrome(syndrome);
  a.set_msn(q.msn);
  if (r.cc_echo == static_cast<uint8_t>(cc::Echo::kOnAck)) ack->bth().set_becn(true);
  if (cc_hooks_) cc_hooks_->OnAck(*this, r, *ack);
  VerbsFinishPacket(ack, {});
  VerbsQueueResponse(p, ack, r.lrh().slid());
}

void Hca::VerbsAtomicAck(int p, VerbsQp& q, const Packet& request, uint32_t psn, uint64_t orig) {
  Packet& r = const_cast<Packet&>(request);
  Packet* resp = VerbsPacket(p, q, op::kRc | op::kAtomicAcknowledge, psn, false, r.lrh().slid(),
                             r.lrh().sl(), q.attr.dest_qpn);
  uint8_t* re = Ext(resp);
  wire::Aeth k{re};
  k.set_syndrome(wire::aeth::Ack(wire::aeth::kCreditsInvalid));
  k.set_msn(q.msn);
  wire::AtomicAckEth{re + op::kAethBytes}.set_orig_remote_data(orig);
  VerbsFinishPacket(resp, {});
  VerbsQueueResponse(p, resp, r.lrh().slid());
}

// The responses to the READ request `pkt` at PSN `psn`, its whole range checked first: how many
// packets (at least one), or 0 when the range may not be read (the caller NAKs). A duplicate
// request runs again: memory is read anew, as IBA 9.7.5.1.1 has the responder do.
uint32_t Hca::VerbsReadResponses(int p, VerbsQp& q, Packet* pkt, uint32_t psn) {
  wire::Reth r{Ext(pkt)};
  uint32_t total = r.dma_length();
  // The whole range is checked before any response goes out; each packet's bytes are read
  // when it is built.
  if (!Region(q, r.rkey(), true, IBV_ACCESS_REMOTE_READ, r.va(), total)) return 0;
  uint32_t mtu = MtuBytes(q.attr.path_mtu);
  uint32_t n = std::max<uint32_t>(1, (total + mtu - 1) / mtu);
  // The responses' payloads, read a chunk at a time straight into their own buffers.
  std::vector<std::vector<uint8_t>> staged;
  size_t next = 0;
  for (uint32_t k = 0; k < n; ++k) {
    uint8_t ro = n == 1       ? op::kReadResponseOnly
                 : k == 0     ? op::kReadResponseFirst
                 : k == n - 1 ? op::kReadResponseLast
                              : op::kReadResponseMiddle;
    Packet* resp = VerbsPacket(p, q, op::kRc | ro, PsnAdd(psn, k), false, pkt->lrh().slid(),
                               pkt->lrh().sl(), q.attr.dest_qpn);
    if (op::Describe(ro).aeth) {
      wire::Aeth a{Ext(resp)};
      a.set_syndrome(wire::aeth::Ack(wire::aeth::kCreditsInvalid));
      a.set_msn(q.msn);
    }
    if (next == staged.size()) {
      uint32_t bytes;
      std::vector<iovec> into = StagePackets(k * mtu, total, mtu, &staged, &bytes);
      next = 0;
      if (!VerbsDma(q, r.rkey(), true, IBV_ACCESS_REMOTE_READ, r.va() + k * mtu, &into, bytes,
                    false)) {
        for (auto& b : staged) std::fill(b.begin(), b.end(), 0);  // unmapped meanwhile
      }
    }
    // A READ of no bytes has one response packet with none.
    VerbsFinishPacket(resp,
                      next < staged.size() ? std::move(staged[next++]) : std::vector<uint8_t>());
    CountVerbsSent(q.qpn - kVerbsQpnBase, q, *resp);
    VerbsQueueResponse(p, resp, pkt->lrh().slid());
  }
  return n;
}

void Hca::VerbsRequest(int p, VerbsQp& q, Packet* pkt) {
  wire::Bth bth = pkt->bth();
  op::Info info = op::Describe(bth.opcode());
  uint8_t o = info.operation;
  uint32_t psn = bth.psn();
  bool rc = q.type == IBV_QPT_RC;
  int32_t d = PsnDiff(psn, q.epsn);
  if (d != 0) {
    if (!rc) {
      // UC: a lost packet loses its message; the next First or Only starts afresh.
      if (info.position != op::Position::kFirst && info.position != op::Position::kOnly) return;
      ReturnRecv(q);
      q.in_message = false;
      q.epsn = psn;
    } else if (d < 0) {
      // A duplicate (IBA 9.7.5.1.1): the requester missed our response. A READ runs again, an
      // atomic gets the result it had (it must not run twice), anything else the latest ACK.
      if (o == op::kReadRequest) {
        if (VerbsReadResponses(p, q, pkt, psn) == 0)
          VerbsAck(p, q, *pkt, wire::aeth::Nak(wire::aeth::kRemoteAccessError), psn);
      } else if (o == op::kCompareSwap || o == op::kFetchAdd) {
        for (const auto& [done_psn, orig] : q.atomic_results)
          if (done_psn == psn) VerbsAtomicAck(p, q, *pkt, psn, orig);
      } else if (bth.ack_req()) {
        VerbsAck(p, q, *pkt, wire::aeth::Ack(wire::aeth::kCreditsInvalid),
                 PsnAdd(q.epsn, 0xFFFFFF));
      }
      return;
    } else {
      if (!q.nak_sent) VerbsAck(p, q, *pkt, wire::aeth::Nak(wire::aeth::kPsnSequenceError), q.epsn);
      q.nak_sent = true;
      return;
    }
  }
  q.nak_sent = false;
  uint32_t len = pkt->payload_len;
  uint8_t* e = Ext(pkt);
  auto nak = [&](uint8_t code) {
    if (rc) VerbsAck(p, q, *pkt, wire::aeth::Nak(code), psn);
  };
  bool is_send =
      o <= op::kSendOnlyImm || o == op::kSendLastInvalidate || o == op::kSendOnlyInvalidate;
  bool is_write = o >= op::kWriteFirst && o <= op::kWriteOnlyImm;
  bool starts = info.position == op::Position::kFirst || info.position == op::Position::kOnly;
  bool ends = info.position == op::Position::kLast || info.position == op::Position::kOnly;
  if ((starts && q.in_message) || (!starts && !q.in_message && (is_send || is_write))) {
    nak(wire::aeth::kInvalidRequest);  // out of sequence opcode (IBA 9.7.5.1.3)
    return;
  }
  if (is_send || (is_write && info.immdt)) {
    // A receive WQE is needed: for a SEND at its first packet, for WRITE with immediate at its
    // last (which consumes one).
    if ((is_send && starts) || (is_write && ends)) {
      if (!q.have_recv) {
        if (!TakeRecv(q, &q.cur_recv)) {
          if (rc)
            VerbsAck(p, q, *pkt, wire::aeth::RnrNak(static_cast<uint8_t>(q.attr.min_rnr_timer)),
                     psn);
          return;  // UC: dropped
        }
        q.have_recv = true;
        q.recv_offset = 0;
      }
    }
  }
  if (is_send) {
    if (q.recv_offset + len > q.cur_recv.length) {
      CompleteRecv(q, q.cur_recv, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, q.recv_offset + len, pkt);
      q.have_recv = false;
      nak(wire::aeth::kInvalidRequest);
      uint32_t qi = q.qpn - kVerbsQpnBase;
      VerbsError(q, qi);
      return;
    }
    if (starts) q.placing.Clear();
    // Each packet's bytes are checked as they arrive; they reach memory a chunk at a time.
    bool placed = Scatter(q, q.cur_recv.sges, q.recv_offset, nullptr, len);
    if (placed) {
      q.recv_offset += len;
      placed = q.placing.Hold(std::move(pkt->data), len, ends,
                              [&](const std::vector<iovec>* iov, uint32_t n) {
                                return Scatter(q, q.cur_recv.sges, q.recv_offset - n, iov, n);
                              });
    }
    if (!placed) {
      CompleteRecv(q, q.cur_recv, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, 0, pkt);
      q.have_recv = false;
      q.placing.Clear();
      nak(wire::aeth::kRemoteOperationalError);
      VerbsError(q, q.qpn - kVerbsQpnBase);
      return;
    }
    CountVerbsReceived(*pkt);
    q.in_message = !ends;
    if (ends) {
      CompleteRecv(q, q.cur_recv, IBV_WC_SUCCESS, IBV_WC_RECV, q.recv_offset, pkt);
      q.have_recv = false;
      ++q.msn;
    }
  } else if (is_write) {
    if (starts) {
      wire::Reth r{e};
      if (!Region(q, r.rkey(), true, IBV_ACCESS_REMOTE_WRITE, r.va(), r.dma_length())) {
        if (info.immdt) ReturnRecv(q);  // the WQE taken for the immediate goes back
        nak(wire::aeth::kRemoteAccessError);
        return;
      }
      q.write_va = r.va();
      q.write_left = q.write_total = r.dma_length();
      q.write_key = r.rkey();
      q.placing.Clear();
    }
    const std::vector<iovec>* check_only = nullptr;
    bool placed =
        len <= q.write_left && (!len || VerbsDma(q, q.write_key, true, IBV_ACCESS_REMOTE_WRITE,
                                                 q.write_va, check_only, len, true));
    if (placed) {
      q.write_va += len;
      q.write_left -= len;
      placed = q.placing.Hold(std::move(pkt->data), len, ends,
                              [&](const std::vector<iovec>* iov, uint32_t n) {
                                return VerbsDma(q, q.write_key, true, IBV_ACCESS_REMOTE_WRITE,
                                                q.write_va - n, iov, n, true);
                              });
    }
    if (!placed) {
      q.placing.Clear();
      nak(wire::aeth::kRemoteAccessError);
      return;
    }
    CountVerbsReceived(*pkt);
    q.in_message = !ends;
    if (ends) {
      if (info.immdt) {
        CompleteRecv(q, q.cur_recv, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM, q.write_total, pkt);
        q.have_recv = false;
      }
      ++q.msn;
    }
  } else if (o == op::kReadRequest && rc) {
    ++q.msn;  // the responses carry it
    uint32_t n = VerbsReadResponses(p, q, pkt, psn);
    if (n == 0) {
      --q.msn;
      nak(wire::aeth::kRemoteAccessError);
      return;
    }
    q.epsn = PsnAdd(q.epsn, n);
    return;
  } else if ((o == op::kCompareSwap || o == op::kFetchAdd) && rc) {
    wire::AtomicEth a{e};
    uint64_t orig = 0;
    if (a.va() % 8) {
      nak(wire::aeth::kInvalidRequest);
      return;
    }
    if (!VerbsDma(q, a.rkey(), true, IBV_ACCESS_REMOTE_ATOMIC, a.va(), &orig, 8, false)) {
      nak(wire::aeth::kRemoteAccessError);
      return;
    }
    uint64_t value = o == op::kFetchAdd    ? orig + a.swap_add()
                     : orig == a.compare() ? a.swap_add()
                                           : orig;
    VerbsDma(q, a.rkey(), true, IBV_ACCESS_REMOTE_ATOMIC, a.va(), &value, 8, true);
    ++q.msn;
    // Kept for a duplicate of this request, as many as reads and atomics may be outstanding.
    q.atomic_results.push_back({psn, orig});
    while (q.atomic_results.size() > std::max<size_t>(1, q.attr.max_dest_rd_atomic))
      q.atomic_results.pop_front();
    VerbsAtomicAck(p, q, *pkt, psn, orig);
    q.epsn = PsnAdd(q.epsn, 1);
    return;
  } else {
    nak(wire::aeth::kInvalidRequest);
    return;
  }
  q.epsn = PsnAdd(q.epsn, 1);
  if (rc && bth.ack_req()) VerbsAck(p, q, *pkt, wire::aeth::Ack(wire::aeth::kCreditsInvalid), psn);
}

void Hca::VerbsResponse(VerbsQp& q, uint32_t qi, Packet* pkt) {
  wire::Bth bth = pkt->bth();
  op::Info info = op::Describe(bth.opcode());
  uint32_t psn = bth.psn();
  uint32_t mtu = MtuBytes(q.attr.path_mtu);
  uint8_t syndrome = info.aeth ? wire::Aeth{Ext(pkt)}.syndrome() : wire::aeth::kAck;
  uint8_t kind = syndrome & wire::aeth::kKindMask;
  bool progress = false;
  // Everything before `upto` (exclusive) that is a SEND or WRITE is acknowledged by this
  // response (IBA 9.7.5.1.6: responses are cumulative).
  auto ack_before = [&](uint32_t upto, bool inclusive) {
    while (!q.inflight.empty()) {
      SendWqe& w = q.inflight.front();
      uint32_t last = PsnAdd(w.first_psn, PacketsOf(w, mtu) - 1);
      int32_t d = PsnDiff(last, upto);
      if (d > 0 || (d == 0 && !inclusive)) break;
      if (IsReadOrAtomic(w.opcode)) break;  // completes with its own response
      CompleteSend(q, w, IBV_WC_SUCCESS);
      q.inflight.pop_front();
      progress = true;
    }
  };
  uint8_t o = info.operation;
  if (o >= op::kReadResponseFirst && o <= op::kReadResponseOnly) {
    ack_before(psn, false);
    if (q.inflight.empty() || q.inflight.front().opcode != IBV_WR_RDMA_READ) return;
    SendWqe& w = q.inflight.front();
    int32_t k = PsnDiff(psn, w.first_psn);
    if (k < 0 || static_cast<uint32_t>(k) * mtu != w.received) return;  // a gap: the timer resends
    uint32_t len = pkt->payload_len;
    if (k == 0) w.placing.Clear();
    bool placed = Scatter(q, w.sges, w.received, nullptr, len);
    bool last = o == op::kReadResponseLast || o == op::kReadResponseOnly;
    if (placed) {
      placed = w.placing.Hold(std::move(pkt->data), len, last,
                              [&](const std::vector<iovec>* iov, uint32_t n) {
                                return Scatter(q, w.sges, w.received + len - n, iov, n);
                              });
    }
    if (!placed) {
      SendWqe bad = std::move(w);
      q.inflight.pop_front();
      CompleteSend(q, bad, IBV_WC_LOC_PROT_ERR);
      VerbsError(q, qi);
      return;
    }
    w.received += len;
    CountVerbsReceived(*pkt);
    progress = true;
    if (last) {
      CompleteSend(q, w, IBV_WC_SUCCESS);
      q.inflight.pop_front();
      ack_before(psn, true);
    }
  } else if (o == op::kAtomicAcknowledge) {
    ack_before(psn, false);
    if (q.inflight.empty() || !IsReadOrAtomic(q.inflight.front().opcode)) return;
    SendWqe& w = q.inflight.front();
    uint64_t orig = wire::AtomicAckEth{Ext(pkt) + op::kAethBytes}.orig_remote_data();
    std::vector<iovec> value{{&orig, 8}};
    if (!w.sges.empty() && !Scatter(q, {w.sges[0]}, 0, &value, 8)) {
      SendWqe bad = std::move(w);
      q.inflight.pop_front();
      CompleteSend(q, bad, IBV_WC_LOC_PROT_ERR);
      VerbsError(q, qi);
      return;
    }
    CompleteSend(q, w, IBV_WC_SUCCESS);
    q.inflight.pop_front();
    progress = true;
  } else if (kind == wire::aeth::kAck) {
    ack_before(psn, true);
  } else if (kind == wire::aeth::kRnrNak) {
    ack_before(psn, false);
    if (q.attr.rnr_retry != 7) {  // 7: retry for ever (IBA 9.7.5.2.8)
      if (q.rnr_retries_left == 0) {
        if (!q.inflight.empty()) {
          SendWqe w = std::move(q.inflight.front());
          q.inflight.pop_front();
          CompleteSend(q, w, IBV_WC_RNR_RETRY_EXC_ERR);
        }
        VerbsError(q, qi);
        return;
      }
      --q.rnr_retries_left;
    }
    q.rnr_wait_until = now() + RnrDelay(syndrome & wire::aeth::kValueMask);
    Rewind(q);
    Post(id(), q.rnr_wait_until, kVerbsKick, 0, qi);
    return;
  } else if (kind == wire::aeth::kNak) {
    uint8_t code = syndrome & wire::aeth::kValueMask;
    ack_before(psn, false);
    if (code == wire::aeth::kPsnSequenceError) {
      Rewind(q);
      VerbsKick(qi);
      return;
    }
    if (!q.inflight.empty()) {
      SendWqe w = std::move(q.inflight.front());
      q.inflight.pop_front();
      CompleteSend(q, w, NakStatus(code));
    }
    VerbsError(q, qi);
    return;
  }
  if (progress) {
    q.retrying = false;
    q.retries_left = q.attr.retry_cnt;
    q.rnr_retries_left = q.attr.rnr_retry;
    ArmAckTimer(q, qi);
  }
}

}  // namespace ibemu::hca
