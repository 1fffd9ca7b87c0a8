// Queue pairs: created, moved through their states and destroyed in the emulated HCA, which runs
// their transport; here the checks rdma-core and the kernel make before the hardware sees a
// request (state machine and attribute masks, queue depths, SGE counts, inline sizes), and the
// completions the HCA reports turned into work completions on the QP's CQs.
#include <endian.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "hostlib/verbs/device.h"
#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/qp_state.h"
#include "hostlib/verbs/resources.h"

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace ibemu::verbs {

Qp* ToQp(ibv_qp* qp) {
  return reinterpret_cast<Qp*>(qp);
}

namespace {

constexpr uint32_t kMaxInlineData = 512;

void ToProto(const ibv_ah_attr& ah, umad::AddressVector* av) {
  av->set_dlid(ah.dlid);
  av->set_sl(ah.sl);
  av->set_src_path_bits(ah.src_path_bits);
  av->set_static_rate(ah.static_rate);
  av->set_is_global(ah.is_global);
  if (ah.is_global) {
    av->set_dgid(ah.grh.dgid.raw, sizeof ah.grh.dgid.raw);
    av->set_flow_label(ah.grh.flow_label);
    av->set_sgid_index(ah.grh.sgid_index);
    av->set_hop_limit(ah.grh.hop_limit);
    av->set_traffic_class(ah.grh.traffic_class);
  }
  av->set_port(ah.port_num);
}

// A completion from the HCA as the work completion the program polls.
void Complete(Qp* qp, const umad::Completion& c) {
  ibv_wc wc;
  std::memset(&wc, 0, sizeof wc);
  wc.wr_id = c.wr_id();
  wc.status = static_cast<ibv_wc_status>(c.status());
  wc.opcode = static_cast<ibv_wc_opcode>(c.opcode());
  wc.byte_len = c.byte_len();
  wc.imm_data = htobe32(c.imm());
  wc.qp_num = qp->qp.qp_num;
  wc.src_qp = c.src_qp();
  wc.wc_flags = c.wc_flags();
  wc.pkey_index = static_cast<uint16_t>(c.pkey_index());
  wc.slid = static_cast<uint16_t>(c.slid());
  wc.sl = static_cast<uint8_t>(c.sl());
  wc.dlid_path_bits = static_cast<uint8_t>(c.dlid_path_bits());
  {
    std::lock_guard lock(qp->mu);
    if (!c.recv())
      --qp->send_outstanding;
    else if (!qp->qp.srq)
      --qp->recv_outstanding;
    // An error completion puts the QP in the Error state (IBA 10.3.1).
    if (wc.status != IBV_WC_SUCCESS) qp->qp.state = IBV_QPS_ERR;
  }
  if (!c.recv() && !c.signaled() && wc.status == IBV_WC_SUCCESS) return;
  if (c.recv() && qp->qp.srq) {
    Srq* srq = ToSrq(qp->qp.srq);
    std::lock_guard lock(srq->mu);
    --srq->outstanding;
  }
  ibv_cq* cq = c.recv() ? qp->qp.recv_cq : qp->qp.send_cq;
  if (cq) ToCq(cq)->Add(wc, c.solicited(), c.timestamp_ns());
}

bool OpcodeFits(ibv_qp_type type, ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_SEND:
    case IBV_WR_SEND_WITH_IMM:
      return true;
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
      return type == IBV_QPT_RC || type == IBV_QPT_UC;
    case IBV_WR_RDMA_READ:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
      return type == IBV_QPT_RC;
    default:
      return false;
  }
}

int PostSend(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  Qp* qp = ToQp(ibqp);
  umad::VerbsRequest req;
  umad::PostSend* ps = req.mutable_post_send();
  ps->set_qpn(ibqp->qp_num);
  std::lock_guard lock(qp->mu);
  int err = 0;
  uint32_t posted = 0;
  for (; wr; wr = wr->next) {
    // As mlx5 answers: a send queue not yet enabled (before RTS), too many SGEs and a full
    // queue are ENOMEM; an opcode the QP type does not have is EINVAL.
    if (!OpcodeFits(ibqp->qp_type, wr->opcode)) {
      err = EINVAL;
      break;
    }
    if (ibqp->state == IBV_QPS_RESET || ibqp->state == IBV_QPS_INIT || ibqp->state == IBV_QPS_RTR ||
        wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > qp->cap.max_send_sge ||
        qp->send_outstanding + posted >= qp->cap.max_send_wr) {
      err = ENOMEM;
      break;
    }
    umad::SendWr* w = ps->add_wr();
    w->set_wr_id(wr->wr_id);
    w->set_opcode(wr->opcode);
    w->set_flags(wr->send_flags);
    w->set_imm(be32toh(wr->imm_data));
    if (wr->send_flags & IBV_SEND_INLINE) {
      std::string data;
      for (int i = 0; i < wr->num_sge; ++i)
        data.append(reinterpret_cast<const char*>(wr->sg_list[i].addr), wr->sg_list[i].length);
      if (data.size() > qp->cap.max_inline_data) {
        ps->mutable_wr()->RemoveLast();
        err = ENOMEM;
        break;
      }
      w->set_inline_data(std::move(data));
    } else {
      for (int i = 0; i < wr->num_sge; ++i) {
        umad::Sge* s = w->add_sge();
        s->set_addr(wr->sg_list[i].addr);
        s->set_length(wr->sg_list[i].length);
        s->set_lkey(wr->sg_list[i].lkey);
      }
    }
    if (ibqp->qp_type == IBV_QPT_UD) {
      if (!wr->wr.ud.ah) {
        ps->mutable_wr()->RemoveLast();
        err = EINVAL;
        break;
      }
      ToProto(ToAh(wr->wr.ud.ah)->attr, w->mutable_ah());
      w->set_remote_qpn(wr->wr.ud.remote_qpn);
      w->set_remote_qkey(wr->wr.ud.remote_qkey);
    } else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
               wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
      w->set_remote_addr(wr->wr.atomic.remote_addr);
      w->set_rkey(wr->wr.atomic.rkey);
      w->set_compare_add(wr->wr.atomic.compare_add);
      w->set_swap(wr->wr.atomic.swap);
    } else {
      w->set_remote_addr(wr->wr.rdma.remote_addr);
      w->set_rkey(wr->wr.rdma.rkey);
    }
    ++posted;
  }
  if (err) *bad_wr = wr;
  if (posted) {
    qp->send_outstanding += posted;
    Hca::Get().Post(std::move(req));
  }
  return err;
}

int PostRecv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  Qp* qp = ToQp(ibqp);
  umad::VerbsRequest req;
  req.mutable_post_recv()->set_qpn(ibqp->qp_num);
  std::lock_guard lock(qp->mu);
  // As mlx5: a receive queue in Reset is EINVAL, and a QP with an SRQ has none.
  if (ibqp->state == IBV_QPS_RESET || ibqp->srq) {
    *bad_wr = wr;
    return EINVAL;
  }
  return PostRecvList(wr, bad_wr, qp->cap.max_recv_sge, qp->cap.max_recv_wr, &qp->recv_outstanding,
                      std::move(req));
}

}  // namespace

int PostRecvList(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, uint32_t max_sge, uint32_t max_wr,
                 uint32_t* outstanding, umad::VerbsRequest req) {
  umad::PostRecv* pr = req.mutable_post_recv();
  int err = 0;
  uint32_t posted = 0;
  for (; wr; wr = wr->next) {
    // As mlx5: too many SGEs EINVAL, a full queue ENOMEM.
    if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > max_sge) {
      err = EINVAL;
      break;
    }
    if (*outstanding + posted >= max_wr) {
      err = ENOMEM;
      break;
    }
    umad::RecvWr* w = pr->add_wr();
    w->set_wr_id(wr->wr_id);
    for (int i = 0; i < wr->num_sge; ++i) {
      umad::Sge* s = w->add_sge();
      s->set_addr(wr->sg_list[i].addr);
      s->set_length(wr->sg_list[i].length);
      s->set_lkey(wr->sg_list[i].lkey);
    }
    ++posted;
  }
  if (err) *bad_wr = wr;
  if (posted) {
    *outstanding += posted;
    Hca::Get().Post(std::move(req));
  }
  return err;
}

// The data-path ops of every context (device.cc puts them in ibv_context.ops).
int QpPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  return PostSend(qp, wr, bad);
}
int QpPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return PostRecv(qp, wr, bad);
}

}  // namespace ibemu::verbs

using namespace ibemu::verbs;
namespace umad = ibemu::umad;

IBEMU_EXPORT ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  ibv_qp_cap& cap = init->cap;
  if (!init->send_cq || !init->recv_cq ||
      (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC && init->qp_type != IBV_QPT_UD)) {
    errno = EINVAL;
    return nullptr;
  }
  ibv_device_attr dev;
  if (ibv_query_device(pd->context, &dev) != 0) {
    errno = ENODEV;
    return nullptr;
  }
  if (cap.max_send_wr > static_cast<uint32_t>(dev.max_qp_wr) ||
      cap.max_recv_wr > static_cast<uint32_t>(dev.max_qp_wr) ||
      cap.max_send_sge > static_cast<uint32_t>(dev.max_sge) ||
      cap.max_recv_sge > static_cast<uint32_t>(dev.max_sge) ||
      cap.max_inline_data > kMaxInlineData) {
    errno = EINVAL;
    return nullptr;
  }
  umad::VerbsRequest req;
  umad::CreateQp* c = req.mutable_create_qp();
  c->set_pd(pd->handle);
  c->set_type(init->qp_type);
  c->set_max_send_wr(cap.max_send_wr);
  c->set_max_recv_wr(cap.max_recv_wr);
  c->set_sq_sig_all(init->sq_sig_all);
  if (init->srq) c->set_srq(init->srq->handle);
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) {
    errno = rep.status();
    return nullptr;
  }
  auto* qp = Allocate<Qp>();
  if (!qp) return nullptr;
  qp->qp.context = pd->context;
  qp->qp.qp_context = init->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = init->send_cq;
  qp->qp.recv_cq = init->recv_cq;
  qp->qp.srq = init->srq;
  qp->qp.handle = rep.qpn();
  qp->qp.qp_num = rep.qpn();
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = init->qp_type;
  pthread_mutex_init(&qp->qp.mutex, nullptr);
  pthread_cond_init(&qp->qp.cond, nullptr);
  qp->cap = cap;
  qp->sq_sig_all = init->sq_sig_all;
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.cap = cap;
  Hca::Get().SetSink(rep.qpn(), [qp](const umad::Completion& c) { Complete(qp, c); });
  return &qp->qp;
}

IBEMU_EXPORT int ibv_modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) {
  Qp* qp = ToQp(ibqp);
  ibv_qp_state from;
  {
    std::lock_guard lock(qp->mu);
    from = ibqp->state;
  }
  if (int e = CheckModify(ibqp->qp_type, from, *attr, mask)) return e;
  if ((mask & IBV_QP_PORT && attr->port_num != 1) ||
      (mask & IBV_QP_PATH_MTU && (attr->path_mtu < IBV_MTU_256 || attr->path_mtu > IBV_MTU_4096)) ||
      (mask & IBV_QP_MAX_QP_RD_ATOMIC && attr->max_rd_atomic > 16) ||
      (mask & IBV_QP_MAX_DEST_RD_ATOMIC && attr->max_dest_rd_atomic > 16) ||
      (mask & IBV_QP_RETRY_CNT && attr->retry_cnt > 7) ||
      (mask & IBV_QP_RNR_RETRY && attr->rnr_retry > 7) ||
      (mask & IBV_QP_MIN_RNR_TIMER && attr->min_rnr_timer > 31) ||
      (mask & IBV_QP_TIMEOUT && attr->timeout > 31))
    return EINVAL;
  umad::VerbsRequest req;
  umad::ModifyQp* m = req.mutable_modify_qp();
  m->set_qpn(ibqp->qp_num);
  umad::QpAttributes* a = m->mutable_attr();
  a->set_mask(static_cast<uint32_t>(mask));
  a->set_state(mask & IBV_QP_STATE ? attr->qp_state : from);
  a->set_port(attr->port_num);
  a->set_pkey_index(attr->pkey_index);
  a->set_qkey(attr->qkey);
  a->set_access(attr->qp_access_flags);
  a->set_path_mtu(attr->path_mtu);
  a->set_dest_qpn(attr->dest_qp_num);
  a->set_rq_psn(attr->rq_psn);
  a->set_sq_psn(attr->sq_psn);
  a->set_max_rd_atomic(attr->max_rd_atomic);
  a->set_max_dest_rd_atomic(attr->max_dest_rd_atomic);
  a->set_min_rnr_timer(attr->min_rnr_timer);
  a->set_timeout(attr->timeout);
  a->set_retry_cnt(attr->retry_cnt);
  a->set_rnr_retry(attr->rnr_retry);
  if (mask & IBV_QP_AV) ToProto(attr->ah_attr, a->mutable_ah());
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) return rep.status();
  std::lock_guard lock(qp->mu);
  if (mask & IBV_QP_STATE) ibqp->state = attr->qp_state;
  // What query_qp reports: every attribute as last set.
  ibv_qp_attr& q = qp->attr;
  if (mask & IBV_QP_PKEY_INDEX) q.pkey_index = attr->pkey_index;
  if (mask & IBV_QP_PORT) q.port_num = attr->port_num;
  if (mask & IBV_QP_QKEY) q.qkey = attr->qkey;
  if (mask & IBV_QP_ACCESS_FLAGS) q.qp_access_flags = attr->qp_access_flags;
  if (mask & IBV_QP_AV) q.ah_attr = attr->ah_attr;
  if (mask & IBV_QP_PATH_MTU) q.path_mtu = attr->path_mtu;
  if (mask & IBV_QP_DEST_QPN) q.dest_qp_num = attr->dest_qp_num;
  if (mask & IBV_QP_RQ_PSN) q.rq_psn = attr->rq_psn;
  if (mask & IBV_QP_SQ_PSN) q.sq_psn = attr->sq_psn;
  if (mask & IBV_QP_MAX_QP_RD_ATOMIC) q.max_rd_atomic = attr->max_rd_atomic;
  if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) q.max_dest_rd_atomic = attr->max_dest_rd_atomic;
  if (mask & IBV_QP_MIN_RNR_TIMER) q.min_rnr_timer = attr->min_rnr_timer;
  if (mask & IBV_QP_TIMEOUT) q.timeout = attr->timeout;
  if (mask & IBV_QP_RETRY_CNT) q.retry_cnt = attr->retry_cnt;
  if (mask & IBV_QP_RNR_RETRY) q.rnr_retry = attr->rnr_retry;
  qp->attr_mask |= mask;
  return 0;
}

IBEMU_EXPORT int ibv_query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int, ibv_qp_init_attr* init) {
  Qp* qp = ToQp(ibqp);
  std::lock_guard lock(qp->mu);
  *attr = qp->attr;
  attr->qp_state = attr->cur_qp_state = ibqp->state;
  attr->cap = qp->cap;
  std::memset(init, 0, sizeof *init);
  init->qp_context = ibqp->qp_context;
  init->send_cq = ibqp->send_cq;
  init->recv_cq = ibqp->recv_cq;
  init->srq = ibqp->srq;
  init->cap = qp->cap;
  init->qp_type = ibqp->qp_type;
  init->sq_sig_all = qp->sq_sig_all;
  return 0;
}

IBEMU_EXPORT int ibv_destroy_qp(ibv_qp* ibqp) {
  Qp* qp = ToQp(ibqp);
  umad::VerbsRequest req;
  req.mutable_destroy_qp()->set_qpn(ibqp->qp_num);
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status() && rep.status() != ENODEV) return rep.status();
  Hca::Get().ClearSink(ibqp->qp_num);
  pthread_mutex_destroy(&ibqp->mutex);
  pthread_cond_destroy(&ibqp->cond);
  delete qp;
  return 0;
}
