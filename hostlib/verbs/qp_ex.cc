// The extended QP (ibv_create_qp_ex with send ops, ibv_qp_to_qp_ex, the ibv_wr_* builders):
// work requests built one call at a time between wr_start and wr_complete, then posted as a
// list, with the errors mlx5 gives (wr_complete: EINVAL before RTS, ENOMEM for a full queue,
// too many SGEs or inline data beyond the QP's limit).
#include <cerrno>
#include <cstring>

#include "hostlib/verbs/device.h"
#include "hostlib/verbs/resources.h"

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace ibemu::verbs {
namespace {

constexpr uint64_t kSendOps = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                              IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |
                              IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                              IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD;

Qp* Of(ibv_qp_ex* qpx) {
  return reinterpret_cast<Qp*>(qpx);
}

ibv_send_wr& Begin(ibv_qp_ex* qpx, ibv_wr_opcode opcode) {
  Qp* qp = Of(qpx);
  qp->batch.emplace_back();
  ibv_send_wr& wr = qp->batch.back();
  std::memset(&wr, 0, sizeof wr);
  wr.wr_id = qpx->wr_id;
  wr.send_flags = qpx->wr_flags;
  wr.opcode = opcode;
  qp->batch_sges.emplace_back();
  return wr;
}

// The WR being built; wr_set_* before any wr_<op> is a caller error, kept for wr_complete.
ibv_send_wr* Current(ibv_qp_ex* qpx) {
  Qp* qp = Of(qpx);
  if (qp->batch.empty()) {
    qp->batch_error = EINVAL;
    return nullptr;
  }
  return &qp->batch.back();
}

void Start(ibv_qp_ex* qpx) {
  Qp* qp = Of(qpx);
  qp->batch.clear();
  qp->batch_sges.clear();
  qp->batch_inline.clear();
  qp->batch_error = 0;
}

void Send(ibv_qp_ex* qpx) {
  Begin(qpx, IBV_WR_SEND);
}
void SendImm(ibv_qp_ex* qpx, __be32 imm) {
  Begin(qpx, IBV_WR_SEND_WITH_IMM).imm_data = imm;
}
void Write(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  ibv_send_wr& wr = Begin(qpx, IBV_WR_RDMA_WRITE);
  wr.wr.rdma.rkey = rkey;
  wr.wr.rdma.remote_addr = addr;
}
void WriteImm(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, __be32 imm) {
  ibv_send_wr& wr = Begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM);
  wr.wr.rdma.rkey = rkey;
  wr.wr.rdma.remote_addr = addr;
  wr.imm_data = imm;
}
void Read(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr) {
  ibv_send_wr& wr = Begin(qpx, IBV_WR_RDMA_READ);
  wr.wr.rdma.rkey = rkey;
  wr.wr.rdma.remote_addr = addr;
}
void CmpSwp(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap) {
  ibv_send_wr& wr = Begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP);
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.remote_addr = addr;
  wr.wr.atomic.compare_add = compare;
  wr.wr.atomic.swap = swap;
}
void FetchAdd(ibv_qp_ex* qpx, uint32_t rkey, uint64_t addr, uint64_t add) {
  ibv_send_wr& wr = Begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD);
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.remote_addr = addr;
  wr.wr.atomic.compare_add = add;
}
void SetUdAddr(ibv_qp_ex* qpx, ibv_ah* ah, uint32_t remote_qpn, uint32_t remote_qkey) {
  if (ibv_send_wr* wr = Current(qpx)) {
    wr->wr.ud.ah = ah;
    wr->wr.ud.remote_qpn = remote_qpn;
    wr->wr.ud.remote_qkey = remote_qkey;
  }
}
void SetSgeList(ibv_qp_ex* qpx, size_t n, const ibv_sge* list) {
  if (ibv_send_wr* wr = Current(qpx)) {
    Qp* qp = Of(qpx);
    qp->batch_sges.back().assign(list, list + n);
    wr->send_flags &= ~IBV_SEND_INLINE;
  }
}
void SetSge(ibv_qp_ex* qpx, uint32_t lkey, uint64_t addr, uint32_t length) {
  ibv_sge sge{addr, length, lkey};
  SetSgeList(qpx, 1, &sge);
}
void SetInlineList(ibv_qp_ex* qpx, size_t n, const ibv_data_buf* bufs) {
  if (ibv_send_wr* wr = Current(qpx)) {
    Qp* qp = Of(qpx);
    // Inline data is copied now, as the provider copies it into the WQE.
    std::string data;
    for (size_t i = 0; i < n; ++i)
      data.append(static_cast<const char*>(bufs[i].addr), bufs[i].length);
    qp->batch_inline.push_back(std::move(data));
    const std::string& kept = qp->batch_inline.back();
    qp->batch_sges.back().assign(1, ibv_sge{reinterpret_cast<uintptr_t>(kept.data()),
                                            static_cast<uint32_t>(kept.size()), 0});
    wr->send_flags |= IBV_SEND_INLINE;
  }
}
void SetInline(ibv_qp_ex* qpx, void* addr, size_t length) {
  ibv_data_buf buf{addr, length};
  SetInlineList(qpx, 1, &buf);
}

int Complete(ibv_qp_ex* qpx) {
  Qp* qp = Of(qpx);
  int err = qp->batch_error;
  if (!err && !qp->batch.empty()) {
    if (qp->qp.state != IBV_QPS_RTS) {
      err = EINVAL;
    } else {
      for (size_t i = 0; i < qp->batch.size(); ++i) {
        ibv_send_wr& wr = qp->batch[i];
        wr.sg_list = qp->batch_sges[i].data();
        wr.num_sge = static_cast<int>(qp->batch_sges[i].size());
        wr.next = i + 1 < qp->batch.size() ? &qp->batch[i + 1] : nullptr;
      }
      ibv_send_wr* bad = nullptr;
      err = QpPostSend(&qp->qp, &qp->batch.front(), &bad);
      // A list is posted whole or not at all through this interface: what went before the bad
      // WR is already with the HCA, as with mlx5 which rings the doorbell for none of it only
      // when the first fails. Ours never fails past the first for a QP in RTS.
    }
  }
  Start(qpx);
  return err;
}

void Abort(ibv_qp_ex* qpx) {
  Start(qpx);
}

}  // namespace

ibv_qp* CreateQpEx(ibv_context* ctx, ibv_qp_init_attr_ex* attr) {
  uint32_t known =
      IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;
  if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || (attr->comp_mask & ~known) ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && attr->create_flags) ||
      ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (attr->send_ops_flags & ~kSendOps))) {
    errno = EOPNOTSUPP;
    return nullptr;
  }
  (void)ctx;
  ibv_qp_init_attr init;
  std::memset(&init, 0, sizeof init);
  init.qp_context = attr->qp_context;
  init.send_cq = attr->send_cq;
  init.recv_cq = attr->recv_cq;
  init.srq = attr->srq;
  init.cap = attr->cap;
  init.qp_type = attr->qp_type;
  init.sq_sig_all = attr->sq_sig_all;
  ibv_qp* ibqp = ibv_create_qp(attr->pd, &init);
  if (!ibqp) return nullptr;
  attr->cap = init.cap;
  if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
    Qp* qp = ToQp(ibqp);
    qp->extended = true;
    ibv_qp_ex& x = qp->qpx;
    x.wr_start = Start;
    x.wr_complete = Complete;
    x.wr_abort = Abort;
    x.wr_send = Send;
    x.wr_send_imm = SendImm;
    x.wr_rdma_write = Write;
    x.wr_rdma_write_imm = WriteImm;
    x.wr_rdma_read = Read;
    x.wr_atomic_cmp_swp = CmpSwp;
    x.wr_atomic_fetch_add = FetchAdd;
    x.wr_set_ud_addr = SetUdAddr;
    x.wr_set_sge = SetSge;
    x.wr_set_sge_list = SetSgeList;
    x.wr_set_inline_data = SetInline;
    x.wr_set_inline_data_list = SetInlineList;
  }
  return ibqp;
}

}  // namespace ibemu::verbs

IBEMU_EXPORT ibv_qp_ex* ibv_qp_to_qp_ex(ibv_qp* qp) {
  ibemu::verbs::Qp* q = ibemu::verbs::ToQp(qp);
  return q->extended ? &q->qpx : nullptr;
}
