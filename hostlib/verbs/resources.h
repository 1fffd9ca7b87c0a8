// The verbs objects a program creates, each the public rdma-core struct first (programs read its
// fields) and the library's state after it. PDs and CQs live in the library; MRs and QPs also in
// the emulated HCA, which checks keys and runs the transport.
#pragma once
#include <infiniband/verbs.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "umad.pb.h"

namespace ibemu::verbs {

struct Pd {
  ibv_pd pd;
};

struct Mr {
  ibv_mr mr;
};

struct CompChannel {
  ibv_comp_channel ch;
  std::mutex mu;
  std::deque<ibv_cq*> events;  // one entry per event, read by ibv_get_cq_event
};

struct Cq {
  // ibv_cq_ex begins with the ibv_cq fields: an extended CQ is the same object.
  union {
    ibv_cq cq;
    ibv_cq_ex cqx;
  };
  std::mutex mu;
  std::deque<ibv_wc> cqes;
  std::deque<uint64_t> timestamps;  // the HCA's clock (ns of virtual time) at each completion
  ibv_wc current{};                 // the extended poll's completion (start_poll/next_poll)
  uint64_t current_ts = 0;
  // The public part starts zeroed, as rdma-core's calloc'ed objects do: fields a provider does
  // not use (read_cvlan, the event counts) are 0 or NULL, never garbage.
  Cq() { std::memset(&cqx, 0, sizeof cqx); }
  bool armed = false;
  bool solicited_only = false;
  bool overrun = false;  // more completions than cqe: the CQ is in error (IBV_EVENT_CQ_ERR)

  // Called where completions are taken in (the library's I/O thread, or Hca::Progress): queues
  // the completion and, when armed for it, raises one event on the channel.
  void Add(const ibv_wc& wc, bool solicited, uint64_t timestamp_ns);
};

struct Ah {
  ibv_ah ah;
  ibv_ah_attr attr;
};

struct Srq {
  ibv_srq srq;
  ibv_srq_attr attr;  // max_wr, max_sge, and the limit (0 once its event has fired)
  std::mutex mu;
  uint32_t outstanding = 0;  // posted receive WRs not yet completed
};

struct Qp {
  // ibv_qp_ex begins with the ibv_qp, so the ibv_qp* a program holds is this struct's address.
  union {
    ibv_qp qp;
    ibv_qp_ex qpx;
  };
  ibv_qp_cap cap;
  bool sq_sig_all = false;
  ibv_qp_attr attr{};  // what ibv_query_qp reports
  int attr_mask = 0;   // which of attr have been set
  std::mutex mu;
  uint32_t send_outstanding = 0;  // posted send WRs not yet completed (the send queue's fill)
  uint32_t recv_outstanding = 0;
  // Created with send ops (ibv_create_qp_ex): ibv_qp_to_qp_ex gives qpx, whose wr_* build here
  // between wr_start and wr_complete.
  bool extended = false;
  std::deque<ibv_send_wr> batch;
  std::deque<std::vector<ibv_sge>> batch_sges;
  std::deque<std::string> batch_inline;
  int batch_error = 0;
  Qp() { std::memset(&qpx, 0, sizeof qpx); }
};

// The data-path ops of ibv_context.ops (cq.cc, qp.cc).
int PollCq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int ReqNotifyCq(ibv_cq* cq, int solicited_only);
int QpPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int QpPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int SrqPostRecv(ibv_srq* srq, ibv_recv_wr* wr, ibv_recv_wr** bad);
// Checks a list of receive WRs against a queue (SGEs per WR, depth), sends what passed to the HCA
// in `req` (a PostRecv naming the QP or SRQ) and counts it in `outstanding`. 0 or the errno
// with bad_wr set.
int PostRecvList(ibv_recv_wr* wr, ibv_recv_wr** bad_wr, uint32_t max_sge, uint32_t max_wr,
                 uint32_t* outstanding, umad::VerbsRequest req);
// verbs_context.create_qp_ex (qp_ex.cc), create_cq_ex and query_rt_values (cq.cc).
ibv_qp* CreateQpEx(ibv_context* ctx, ibv_qp_init_attr_ex* attr);
ibv_cq_ex* CreateCqEx(ibv_context* ctx, ibv_cq_init_attr_ex* attr);
int QueryRtValues(ibv_context* ctx, ibv_values_ex* values);

Pd* ToPd(ibv_pd* pd);
Cq* ToCq(ibv_cq* cq);
Qp* ToQp(ibv_qp* qp);
Srq* ToSrq(ibv_srq* srq);
Ah* ToAh(ibv_ah* ah);

}  // namespace ibemu::verbs
