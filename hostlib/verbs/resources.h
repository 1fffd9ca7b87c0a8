// The verbs objects a program creates, each the public rdma-core struct first (programs read its
// fields) and the library's state after it. PDs and CQs live in the library; MRs and QPs also in
// the emulated HCA, which checks keys and runs the transport.
#pragma once
#include <infiniband/verbs.h>

#include <condition_variable>
#include <deque>
#include <mutex>

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
  ibv_cq cq;
  std::mutex mu;
  std::deque<ibv_wc> cqes;
  bool armed = false;
  bool solicited_only = false;
  bool overrun = false;  // more completions than cqe: the CQ is in error (IBV_EVENT_CQ_ERR)

  // Called on the library's I/O thread: queues the completion and, when armed for it, raises
  // one event on the channel.
  void Add(const ibv_wc& wc, bool solicited);
};

struct Qp {
  ibv_qp qp;
  ibv_qp_cap cap;
  bool sq_sig_all = false;
  ibv_qp_attr attr{};  // what ibv_query_qp reports
  int attr_mask = 0;   // which of attr have been set
  std::mutex mu;
  uint32_t send_outstanding = 0;  // posted send WRs not yet completed (the send queue's fill)
  uint32_t recv_outstanding = 0;
};

// The data-path ops of ibv_context.ops (cq.cc, qp.cc).
int PollCq(ibv_cq* cq, int num_entries, ibv_wc* wc);
int ReqNotifyCq(ibv_cq* cq, int solicited_only);
int QpPostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int QpPostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);

Pd* ToPd(ibv_pd* pd);
Cq* ToCq(ibv_cq* cq);
Qp* ToQp(ibv_qp* qp);

}  // namespace ibemu::verbs
