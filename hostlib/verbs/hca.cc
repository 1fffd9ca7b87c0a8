#include "hostlib/verbs/hca.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "hostlib/verbs/device.h"
#include "hostlib/verbs/resources.h"

namespace ibemu::verbs {

Hca& Hca::Get() {
  // Never destroyed: programs call verbs from atexit handlers and other threads at exit.
  static Hca* hca = new Hca();
  return *hca;
}

Hca::Hca() : where_(hostclient::FabricAddress::FromEnv()) {
  if (const char* v = std::getenv("IBEMU_VERBS_HCA"); v && *v) {
    node_ = v;
    variable_ = "IBEMU_VERBS_HCA";
  } else if (const char* u = std::getenv("IBEMU_UMAD_PORT"); u && *u) {
    node_ = hostclient::ParsePortRef(u).node;
    variable_ = "IBEMU_UMAD_PORT";
  } else {
    node_ = hostclient::NodeFromRankMap(&no_node_);
    variable_ = "IBEMU_HCA_MAP";
  }
}

void Hca::Hint(const std::string& why) {
  if (hinted_.exchange(true)) return;
  std::fprintf(stderr, "libibverbs (ibemu): no RDMA device: %s\n", why.c_str());
}

std::optional<umad::CaAttributes> Hca::Describe() {
  if (node_.empty() && !no_node_.empty()) {
    Hint(no_node_);
    return std::nullopt;
  }
  if (node_.empty()) {
    Hint(
        "IBEMU_VERBS_HCA is not set, so this process stands behind no HCA of an emulated "
        "fabric. Start a fabric with `ibemu up <topology or scenario>` and run the program with "
        "`ibemu exec --hca <node> -- <program>` (or set IBEMU_VERBS_HCA=<node>)");
    return std::nullopt;
  }
  std::string why;
  auto ca = hostclient::DescribeNode(
      where_, node_, variable_, link_,
      [this] {
        std::lock_guard lock(mu_);
        return link_.Start(where_.Endpoint());
      },
      &why);
  if (!ca) Hint(why);
  return ca;
}

uint32_t Hca::OpenSession() {
  std::lock_guard lock(session_mu_);
  if (session_) return session_;
  if (!Describe()) return 0;  // says why, once
  // The emulated HCA reads and writes this process's registered memory from the fabric's
  // process (process_vm_readv/writev), as an HCA does by DMA; under Yama's ptrace_scope 1 that
  // needs our consent. Same-user processes only, as ptrace always requires.
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
  umad::ToFabric msg;
  umad::VerbsRequest* v = msg.mutable_verbs();
  v->mutable_open()->set_node(node_);
  v->mutable_open()->set_pid(static_cast<uint32_t>(getpid()));
  auto reply = link_.Call(msg, where_.query_timeout);
  if (!reply || !reply->has_verbs_reply() || reply->verbs_reply().status() != 0) {
    Hint(reply && reply->has_verbs_reply() ? reply->verbs_reply().error()
                                           : "the fabric did not answer the verbs Open");
    return 0;
  }
  session_ = reply->verbs_reply().session();
  return session_;
}

umad::VerbsReply Hca::Request(umad::VerbsRequest req) {
  umad::VerbsReply fail;
  fail.set_status(ENODEV);
  uint32_t session = OpenSession();
  if (!session) return fail;
  req.set_session(session);
  umad::ToFabric msg;
  *msg.mutable_verbs() = std::move(req);
  auto reply = link_.Call(msg, where_.query_timeout);
  if (!reply || !reply->has_verbs_reply()) return fail;
  return reply->verbs_reply();
}

void Hca::Post(umad::VerbsRequest req) {
  req.set_session(session_);
  umad::ToFabric msg;
  *msg.mutable_verbs() = std::move(req);
  link_.Post(msg);
}

void Hca::SetSink(uint32_t qpn, CompletionSink sink) {
  std::lock_guard lock(sinks_mu_);
  sinks_[qpn] = std::move(sink);
}

void Hca::ClearSink(uint32_t qpn) {
  std::lock_guard lock(sinks_mu_);
  sinks_.erase(qpn);
}

void Hca::SetSrq(uint32_t srqn, ibv_srq* srq) {
  std::lock_guard lock(sinks_mu_);
  if (srq)
    srqs_[srqn] = srq;
  else
    srqs_.erase(srqn);
}

void Hca::OnFabricMessage(const umad::FromFabric& msg) {
  if (msg.has_async_event()) {
    const umad::AsyncEvent& a = msg.async_event();
    std::lock_guard lock(sinks_mu_);
    auto it = srqs_.find(a.srq());
    if (a.type() != IBV_EVENT_SRQ_LIMIT_REACHED || it == srqs_.end()) return;
    {
      Srq* srq = ToSrq(it->second);
      std::lock_guard srq_lock(srq->mu);
      srq->attr.srq_limit = 0;  // the event disarms it (IBA 10.2.9.5)
    }
    ibv_async_event e{};
    e.element.srq = it->second;
    e.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
    RaiseAsyncEvent(it->second->context, e);
    return;
  }
  if (!msg.has_completions()) return;
  std::lock_guard lock(sinks_mu_);
  for (const umad::Completion& c : msg.completions().c()) {
    auto it = sinks_.find(c.qpn());
    if (it != sinks_.end()) it->second(c);
  }
}

}  // namespace ibemu::verbs
