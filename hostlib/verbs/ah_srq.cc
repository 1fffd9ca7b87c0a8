// Address handles (kept here: a UD work request carries its AH's address vector to the HCA) and
// shared receive queues (in the HCA, which hands their WRs to whichever QP receives, and raises
// IBV_EVENT_SRQ_LIMIT_REACHED once per arming).
#include <cerrno>
#include <cstring>

#include "hostlib/verbs/attributes.h"
#include "hostlib/verbs/device.h"
#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/resources.h"

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace ibemu::verbs {

Ah* ToAh(ibv_ah* ah) {
  return reinterpret_cast<Ah*>(ah);
}
Srq* ToSrq(ibv_srq* srq) {
  return reinterpret_cast<Srq*>(srq);
}

int SrqPostRecv(ibv_srq* ibsrq, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  Srq* srq = ToSrq(ibsrq);
  umad::VerbsRequest req;
  req.mutable_post_recv()->set_srq(ibsrq->handle);
  std::lock_guard lock(srq->mu);
  return PostRecvList(wr, bad_wr, srq->attr.max_sge, srq->attr.max_wr, &srq->outstanding,
                      std::move(req));
}

}  // namespace ibemu::verbs

using namespace ibemu::verbs;
namespace umad = ibemu::umad;

IBEMU_EXPORT ibv_ah* ibv_create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  if (attr->port_num != 1 || attr->sl > 15) {
    errno = EINVAL;
    return nullptr;
  }
  auto* ah = Allocate<Ah>();
  if (!ah) return nullptr;
  ah->ah.context = pd->context;
  ah->ah.pd = pd;
  ah->attr = *attr;
  return &ah->ah;
}

IBEMU_EXPORT int ibv_destroy_ah(ibv_ah* ah) {
  delete ToAh(ah);
  return 0;
}

// The address that answers a received datagram: the sender's LID and SL, our path bits, and the
// GRH's source GID when one came (IBA 11.2.3).
IBEMU_EXPORT int ibv_init_ah_from_wc(ibv_context*, uint8_t port_num, ibv_wc* wc, ibv_grh* grh,
                                     ibv_ah_attr* ah_attr) {
  std::memset(ah_attr, 0, sizeof *ah_attr);
  ah_attr->dlid = wc->slid;
  ah_attr->sl = wc->sl;
  ah_attr->src_path_bits = wc->dlid_path_bits;
  ah_attr->port_num = port_num;
  if (wc->wc_flags & IBV_WC_GRH) {
    if (!grh) {
      errno = EINVAL;
      return -1;
    }
    ah_attr->is_global = 1;
    ah_attr->grh.dgid = grh->sgid;
    uint32_t flow = be32toh(grh->version_tclass_flow);
    ah_attr->grh.flow_label = flow & 0xFFFFF;
    ah_attr->grh.traffic_class = static_cast<uint8_t>(flow >> 20);
    ah_attr->grh.hop_limit = 0xFF;
  }
  return 0;
}

IBEMU_EXPORT ibv_ah* ibv_create_ah_from_wc(ibv_pd* pd, ibv_wc* wc, ibv_grh* grh, uint8_t port_num) {
  ibv_ah_attr attr;
  if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr)) return nullptr;
  return ibv_create_ah(pd, &attr);
}

IBEMU_EXPORT ibv_srq* ibv_create_srq(ibv_pd* pd, ibv_srq_init_attr* init) {
  ibv_srq_attr& a = init->attr;
  if (a.max_wr == 0 || a.max_wr > kMaxSrqWr || a.max_sge > kMaxSrqSge || a.srq_limit > a.max_wr) {
    errno = EINVAL;
    return nullptr;
  }
  umad::VerbsRequest req;
  umad::CreateSrq* c = req.mutable_create_srq();
  c->set_pd(pd->handle);
  c->set_max_wr(a.max_wr);
  c->set_srq_limit(a.srq_limit);
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) {
    errno = rep.status();
    return nullptr;
  }
  auto* srq = Allocate<Srq>();
  if (!srq) return nullptr;
  srq->srq.context = pd->context;
  srq->srq.srq_context = init->srq_context;
  srq->srq.pd = pd;
  srq->srq.handle = rep.srq();
  pthread_mutex_init(&srq->srq.mutex, nullptr);
  pthread_cond_init(&srq->srq.cond, nullptr);
  srq->attr = a;
  Hca::Get().SetSrq(rep.srq(), &srq->srq);
  return &srq->srq;
}

IBEMU_EXPORT int ibv_modify_srq(ibv_srq* ibsrq, ibv_srq_attr* attr, int mask) {
  Srq* srq = ToSrq(ibsrq);
  if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) return EINVAL;
  if (mask & IBV_SRQ_MAX_WR && (attr->max_wr == 0 || attr->max_wr > kMaxSrqWr)) return EINVAL;
  umad::VerbsRequest req;
  umad::ModifySrq* m = req.mutable_modify_srq();
  m->set_srq(ibsrq->handle);
  m->set_mask(static_cast<uint32_t>(mask));
  m->set_max_wr(attr->max_wr);
  m->set_srq_limit(attr->srq_limit);
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status()) return rep.status();
  std::lock_guard lock(srq->mu);
  if (mask & IBV_SRQ_MAX_WR) srq->attr.max_wr = attr->max_wr;
  if (mask & IBV_SRQ_LIMIT) srq->attr.srq_limit = attr->srq_limit;
  return 0;
}

IBEMU_EXPORT int ibv_query_srq(ibv_srq* ibsrq, ibv_srq_attr* attr) {
  Srq* srq = ToSrq(ibsrq);
  std::lock_guard lock(srq->mu);
  *attr = srq->attr;
  return 0;
}

IBEMU_EXPORT int ibv_destroy_srq(ibv_srq* ibsrq) {
  umad::VerbsRequest req;
  req.mutable_destroy_srq()->set_srq(ibsrq->handle);
  umad::VerbsReply rep = Hca::Get().Request(req);
  if (rep.status() && rep.status() != ENODEV) return rep.status();
  Hca::Get().SetSrq(ibsrq->handle, nullptr);
  pthread_mutex_destroy(&ibsrq->mutex);
  pthread_cond_destroy(&ibsrq->cond);
  delete ToSrq(ibsrq);
  return 0;
}
