// The converters between the kernel's uverbs and SA structures and the verbs ones (rdma-core's
// libibverbs/marshall.c exports them for librdmacm, which receives path records and QP
// attributes from the kernel's rdma_cm). Field by field, the kernel's byte order kept where both
// sides hold network order.
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>

#include <cstring>
#include <type_traits>

#define IBEMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

void AhFromKern(ibv_ah_attr* dst, const ib_uverbs_ah_attr* src) {
  std::memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof dst->grh.dgid);
  dst->grh.flow_label = src->grh.flow_label;
  dst->grh.sgid_index = src->grh.sgid_index;
  dst->grh.hop_limit = src->grh.hop_limit;
  dst->grh.traffic_class = src->grh.traffic_class;
  dst->dlid = src->dlid;
  dst->sl = src->sl;
  dst->src_path_bits = src->src_path_bits;
  dst->static_rate = src->static_rate;
  dst->is_global = src->is_global;
  dst->port_num = src->port_num;
}

}  // namespace

IBEMU_EXPORT void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src) {
  AhFromKern(dst, src);
}

IBEMU_EXPORT void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src) {
  // qp_state is left as it was, as rdma-core leaves it (librdmacm sets it itself).
  dst->cur_qp_state = static_cast<ibv_qp_state>(src->cur_qp_state);
  dst->path_mtu = static_cast<ibv_mtu>(src->path_mtu);
  dst->path_mig_state = static_cast<ibv_mig_state>(src->path_mig_state);
  dst->qkey = src->qkey;
  dst->rq_psn = src->rq_psn;
  dst->sq_psn = src->sq_psn;
  dst->dest_qp_num = src->dest_qp_num;
  dst->qp_access_flags = static_cast<int>(src->qp_access_flags);
  dst->cap.max_send_wr = src->max_send_wr;
  dst->cap.max_recv_wr = src->max_recv_wr;
  dst->cap.max_send_sge = src->max_send_sge;
  dst->cap.max_recv_sge = src->max_recv_sge;
  dst->cap.max_inline_data = src->max_inline_data;
  AhFromKern(&dst->ah_attr, &src->ah_attr);
  AhFromKern(&dst->alt_ah_attr, &src->alt_ah_attr);
  dst->pkey_index = src->pkey_index;
  dst->alt_pkey_index = src->alt_pkey_index;
  dst->en_sqd_async_notify = src->en_sqd_async_notify;
  dst->sq_draining = src->sq_draining;
  dst->max_rd_atomic = src->max_rd_atomic;
  dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
  dst->min_rnr_timer = src->min_rnr_timer;
  dst->port_num = src->port_num;
  dst->timeout = src->timeout;
  dst->retry_cnt = src->retry_cnt;
  dst->rnr_retry = src->rnr_retry;
  dst->alt_port_num = src->alt_port_num;
  dst->alt_timeout = src->alt_timeout;
}

// The path record fields both structures name alike; only the GIDs differ in type.
template <typename Dst, typename Src>
void CopyPathRec(Dst* dst, const Src* src) {
  auto copy = [](auto& to, const auto& from) {
    to = static_cast<std::decay_t<decltype(to)>>(from);
  };
  copy(dst->dlid, src->dlid);
  copy(dst->slid, src->slid);
  copy(dst->raw_traffic, src->raw_traffic);
  copy(dst->flow_label, src->flow_label);
  copy(dst->hop_limit, src->hop_limit);
  copy(dst->traffic_class, src->traffic_class);
  copy(dst->reversible, src->reversible);
  copy(dst->numb_path, src->numb_path);
  copy(dst->pkey, src->pkey);
  copy(dst->sl, src->sl);
  copy(dst->mtu_selector, src->mtu_selector);
  copy(dst->mtu, src->mtu);
  copy(dst->rate_selector, src->rate_selector);
  copy(dst->rate, src->rate);
  copy(dst->packet_life_time_selector, src->packet_life_time_selector);
  copy(dst->packet_life_time, src->packet_life_time);
  copy(dst->preference, src->preference);
}

IBEMU_EXPORT void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src) {
  std::memcpy(dst->dgid.raw, src->dgid, sizeof dst->dgid);
  std::memcpy(dst->sgid.raw, src->sgid, sizeof dst->sgid);
  CopyPathRec(dst, src);
}

IBEMU_EXPORT void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src) {
  std::memset(dst, 0, sizeof *dst);
  std::memcpy(dst->dgid, src->dgid.raw, sizeof dst->dgid);
  std::memcpy(dst->sgid, src->sgid.raw, sizeof dst->sgid);
  CopyPathRec(dst, src);
}
