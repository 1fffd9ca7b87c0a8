// The verbs side of the host channel: a program opens a session on an HCA (the node of
// IBEMU_VERBS_HCA, and its pid, whose memory the HCA then reads and writes), and its requests
// become calls on that HCA's verbs block (emulator/hca/verbs_transport.cc): resources at once,
// posted work at the partition's current virtual time. Completions go back as they happen.

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "emulator/fabric/umad_service.h"
#include "emulator/hca/hca.h"
#include "umad.pb.h"

namespace ibemu::fabric {
namespace {

constexpr size_t kMaxSessionsPerClient = 64;
// Far above what the pingpongs, perftest or an MPI rank use, and low enough that a client
// cannot grow the fabric's memory without bound.
constexpr uint32_t kMaxQpsPerSession = 4096;
constexpr uint32_t kMaxMrsPerSession = 4096;

std::vector<hca::Sge> SgesOf(const google::protobuf::RepeatedPtrField<umad::Sge>& in,
                             uint32_t* total) {
  std::vector<hca::Sge> v;
  v.reserve(in.size());
  *total = 0;
  for (const umad::Sge& s : in) {
    v.push_back({s.addr(), s.length(), s.lkey()});
    *total += s.length();
  }
  return v;
}

}  // namespace

std::string UmadService::NodeOfLid(uint16_t lid) const {
  for (size_t n = 0; n < f_.devices.size(); ++n) {
    if (!f_.devices[n]) continue;
    const mgmt::ManagedNode& d = *f_.devices[n];
    for (int p = 1; p <= d.num_ports(); ++p) {
      const mgmt::PortMgmt& pm = d.port_mgmt(p);
      if (pm.lid != 0 && lid >= pm.lid && lid < pm.lid + (1u << pm.lmc))
        return s_.topo.nodes[n].name;
    }
  }
  return "LID " + std::to_string(lid);
}

void UmadService::HandleVerbs(const std::string& routing_id, uint64_t request,
                              const umad::VerbsRequest& v) {
  umad::FromFabric rep;
  rep.set_request(request);
  umad::VerbsReply* r = rep.mutable_verbs_reply();
  auto reply = [&] { Reply(routing_id, rep.SerializeAsString()); };
  if (v.has_open()) {
    int n = FindNode(v.open().node());
    auto* h = n >= 0 ? dynamic_cast<hca::Hca*>(f_.devices[n].get()) : nullptr;
    size_t held = std::count_if(sessions_.begin(), sessions_.end(),
                                [&](const auto& kv) { return kv.second.routing_id == routing_id; });
    if (!h) {
      r->set_status(ENODEV);
      r->set_error("no channel adapter '" + v.open().node() + "' in " + s_.topology_source);
    } else if (held >= kMaxSessionsPerClient) {
      // One per device context a program opens; a client with more is broken or hostile.
      r->set_status(EMFILE);
      r->set_error("too many verbs sessions from one client (" + std::to_string(held) + ")");
    } else {
      uint32_t id = next_session_++;
      sessions_[id] = {routing_id, static_cast<engine::LpId>(n),
                       static_cast<pid_t>(v.open().pid())};
      r->set_session(id);
    }
    reply();
    return;
  }
  auto it = sessions_.find(v.session());
  if (it == sessions_.end() || it->second.routing_id != routing_id) {
    // Not this client's session: requests that expect an answer get EINVAL, posts are dropped.
    if (!v.has_post_send() && !v.has_post_recv()) {
      r->set_status(EINVAL);
      r->set_error("no verbs session " + std::to_string(v.session()) + " for this client");
      reply();
    }
    return;
  }
  Session& sess = it->second;
  auto& h = dynamic_cast<hca::Hca&>(*f_.devices[sess.lp]);
  engine::SimTime at = part_.now();
  switch (v.op_case()) {
    case umad::VerbsRequest::kRegMr: {
      const umad::RegMr& m = v.reg_mr();
      hca::MemoryRegion mr;
      mr.session = v.session();
      mr.pid = sess.pid;
      mr.pd = m.pd();
      mr.addr = m.addr();
      mr.length = m.length();
      mr.access = m.access();
      uint32_t lkey = 0, rkey = 0;
      r->set_status(sess.mrs >= kMaxMrsPerSession ? ENOMEM : h.RegMr(mr, &lkey, &rkey));
      if (r->status() == 0) ++sess.mrs;
      r->set_lkey(lkey);
      r->set_rkey(rkey);
      break;
    }
    case umad::VerbsRequest::kDeregMr:
      r->set_status(h.DeregMr(v.session(), v.dereg_mr().lkey()));
      if (r->status() == 0) --sess.mrs;
      break;
    case umad::VerbsRequest::kCreateQp: {
      const umad::CreateQp& c = v.create_qp();
      uint32_t qpn = 0;
      r->set_status(sess.qps >= kMaxQpsPerSession
                        ? ENOMEM
                        : h.CreateVerbsQp(v.session(), sess.pid, c.pd(), static_cast<int>(c.type()),
                                          c.sq_sig_all(), c.max_send_wr(), c.max_recv_wr(), c.srq(),
                                          &qpn));
      if (r->status() == 0) ++sess.qps;
      r->set_qpn(qpn);
      break;
    }
    case umad::VerbsRequest::kModifyQp: {
      const umad::QpAttributes& a = v.modify_qp().attr();
      hca::VerbsQpAttr q;
      q.mask = a.mask();
      q.state = static_cast<int>(a.state());
      q.port = static_cast<int>(a.port());
      q.pkey_index = a.pkey_index();
      q.qkey = a.qkey();
      q.access = a.access();
      q.path_mtu = a.path_mtu();
      q.dest_qpn = a.dest_qpn();
      q.rq_psn = a.rq_psn();
      q.sq_psn = a.sq_psn();
      q.max_rd_atomic = a.max_rd_atomic();
      q.max_dest_rd_atomic = a.max_dest_rd_atomic();
      q.min_rnr_timer = a.min_rnr_timer();
      q.timeout = a.timeout();
      q.retry_cnt = a.retry_cnt();
      q.rnr_retry = a.rnr_retry();
      q.dlid = static_cast<uint16_t>(a.ah().dlid());
      q.sl = static_cast<uint8_t>(a.ah().sl() & 0xF);
      q.src_path_bits = static_cast<uint8_t>(a.ah().src_path_bits());
      r->set_status(h.ModifyVerbsQp(v.session(), v.modify_qp().qpn(), q, at));
      // A connected QP's data becomes a flow of the results, named after the QP and its path.
      uint32_t qpn = v.modify_qp().qpn();
      if (r->status() == 0 && (q.mask & IBV_QP_STATE) && q.state == IBV_QPS_RTR &&
          (q.mask & IBV_QP_AV) && h.VerbsFlow(qpn) == engine::kNoFlow) {
        char name[48];
        std::snprintf(name, sizeof name, "%s.qp%06x", s_.topo.nodes[sess.lp].name.c_str(), qpn);
        h.SetVerbsFlow(qpn,
                       f_.flows.Add(name, s_.topo.nodes[sess.lp].name + "->" + NodeOfLid(q.dlid)));
      }
      break;
    }
    case umad::VerbsRequest::kDestroyQp:
      r->set_status(h.DestroyVerbsQp(v.session(), v.destroy_qp().qpn()));
      if (r->status() == 0) --sess.qps;
      break;
    case umad::VerbsRequest::kReadClock:
      r->set_clock_ns(static_cast<uint64_t>(at / 1000));
      break;
    case umad::VerbsRequest::kClose:
      CloseSession(v.session());
      break;
    case umad::VerbsRequest::kPostSend: {
      std::vector<hca::SendWqe> wqes;
      for (const umad::SendWr& w : v.post_send().wr()) {
        hca::SendWqe q;
        q.wr_id = w.wr_id();
        q.opcode = static_cast<int>(w.opcode());
        q.signaled = w.flags() & IBV_SEND_SIGNALED;
        q.solicited = w.flags() & IBV_SEND_SOLICITED;
        q.inlined = w.flags() & IBV_SEND_INLINE;
        q.imm = w.imm();
        q.sges = SgesOf(w.sge(), &q.length);
        if (q.inlined) {
          q.inline_data = w.inline_data();
          q.length = static_cast<uint32_t>(q.inline_data.size());
        }
        if (q.opcode == IBV_WR_ATOMIC_CMP_AND_SWP || q.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
          q.length = 8;
        q.dlid = static_cast<uint16_t>(w.ah().dlid());
        q.sl = static_cast<uint8_t>(w.ah().sl() & 0xF);
        q.src_path_bits = static_cast<uint8_t>(w.ah().src_path_bits());
        if (w.ah().is_global() && w.ah().dgid().size() == 16) {
          q.global = true;
          std::copy(w.ah().dgid().begin(), w.ah().dgid().end(), q.dgid.begin());
          q.flow_label = w.ah().flow_label() & 0xFFFFF;
          q.sgid_index = static_cast<uint8_t>(w.ah().sgid_index());
          q.hop_limit = static_cast<uint8_t>(w.ah().hop_limit());
          q.traffic_class = static_cast<uint8_t>(w.ah().traffic_class());
        }
        q.remote_qpn = w.remote_qpn();
        q.remote_qkey = w.remote_qkey();
        q.remote_addr = w.remote_addr();
        q.rkey = w.rkey();
        q.compare_add = w.compare_add();
        q.swap = w.swap();
        wqes.push_back(std::move(q));
      }
      h.PostVerbsSend(v.session(), v.post_send().qpn(), std::move(wqes), at);
      return;
    }
    case umad::VerbsRequest::kPostRecv: {
      std::vector<hca::RecvWqe> wqes;
      for (const umad::RecvWr& w : v.post_recv().wr()) {
        hca::RecvWqe q;
        q.wr_id = w.wr_id();
        q.sges = SgesOf(w.sge(), &q.length);
        wqes.push_back(std::move(q));
      }
      if (v.post_recv().srq())
        h.PostSrqRecv(v.session(), v.post_recv().srq(), std::move(wqes));
      else
        h.PostVerbsRecv(v.session(), v.post_recv().qpn(), std::move(wqes), at);
      return;
    }
    case umad::VerbsRequest::kCreateSrq: {
      const umad::CreateSrq& c = v.create_srq();
      uint32_t srqn = 0;
      r->set_status(sess.qps >= kMaxQpsPerSession
                        ? ENOMEM
                        : h.CreateSrq(v.session(), c.pd(), c.max_wr(), c.srq_limit(), &srqn));
      if (r->status() == 0) ++sess.qps;
      r->set_srq(srqn);
      break;
    }
    case umad::VerbsRequest::kModifySrq: {
      const umad::ModifySrq& m = v.modify_srq();
      r->set_status(h.ModifySrq(v.session(), m.srq(), m.mask(), m.max_wr(), m.srq_limit()));
      break;
    }
    case umad::VerbsRequest::kDestroySrq:
      r->set_status(h.DestroySrq(v.session(), v.destroy_srq().srq()));
      if (r->status() == 0) --sess.qps;
      break;
    default:
      r->set_status(EINVAL);
      break;
  }
  reply();
}

void UmadService::CloseSession(uint32_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  if (auto* h = dynamic_cast<hca::Hca*>(f_.devices[it->second.lp].get())) h->CloseVerbsSession(id);
  sessions_.erase(it);
}

void UmadService::SendToSession(uint32_t session, const umad::FromFabric& msg) {
  auto it = sessions_.find(session);
  if (it == sessions_.end()) return;
  // Called from inside the HCA's event: a program that has gone must not be forgotten here (its
  // QPs are being walked), so a failed send is left for ForgetDeparted to find.
  SendTo(it->second.routing_id, msg.SerializeAsString());
}

void UmadService::AsyncEvent(uint32_t session, int type, uint32_t qpn, uint32_t srq) {
  FlushCompletions();  // in the order they happened
  umad::FromFabric rep;
  umad::AsyncEvent* e = rep.mutable_async_event();
  e->set_session(session);
  e->set_type(static_cast<uint32_t>(type));
  e->set_qpn(qpn);
  e->set_srq(srq);
  SendToSession(session, rep);
}

void UmadService::FlushCompletions() {
  for (auto& [session, msg] : pending_completions_) SendToSession(session, msg);
  pending_completions_.clear();
}

void UmadService::Complete(uint32_t session, const hca::VerbsCompletion& c) {
  // A bounded message however long the step (about 50 bytes a completion).
  constexpr int kMaxBatch = 256;
  umad::FromFabric& rep = pending_completions_[session];
  umad::Completions* cs = rep.mutable_completions();
  if (cs->c_size() >= kMaxBatch) {
    SendToSession(session, rep);
    cs->clear_c();
  }
  cs->set_session(session);
  umad::Completion* o = cs->add_c();
  o->set_qpn(c.qpn);
  o->set_recv(c.recv);
  o->set_wr_id(c.wr_id);
  o->set_status(static_cast<uint32_t>(c.status));
  o->set_opcode(static_cast<uint32_t>(c.opcode));
  o->set_byte_len(c.byte_len);
  o->set_imm(c.imm);
  o->set_wc_flags(c.wc_flags);
  o->set_src_qp(c.src_qp);
  o->set_slid(c.slid);
  o->set_sl(c.sl);
  o->set_signaled(c.signaled);
  o->set_solicited(c.solicited);
  o->set_timestamp_ns(static_cast<uint64_t>(c.timestamp / 1000));
}

}  // namespace ibemu::fabric
