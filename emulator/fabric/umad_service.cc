#include "emulator/fabric/umad_service.h"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "common/mad/smp_attributes.h"
#include "emulator/hca/hca.h"
#include "umad.pb.h"

namespace ibemu::fabric {
namespace {

// The source LP of injected events: after every device, so ordering stays deterministic.
constexpr engine::LpId kInjectSource = 0xFFFFFFFEu;
constexpr size_t kMaxAttachmentsPerClient = 1024;
// Every emulated host has one HCA, so each sees it as the first mlx5 device, as a host with one
// ConnectX-5 does.
constexpr const char* kCaName = "mlx5_0";
constexpr const char* kFirmwareVersion = "16.35.1012";

uint32_t RateGbps(const mgmt::PortMgmt& pm) {
  static constexpr double kLane[] = {2.5, 5, 10, 14, 25, 50, 100};
  int lanes = pm.link_width_active == 1   ? 1
              : pm.link_width_active == 2 ? 4
              : pm.link_width_active == 4 ? 8
              : pm.link_width_active == 8 ? 12
                                          : 0;
  int sp = 0;
  if (pm.link_speed_ext_active) {
    sp = 3 + __builtin_ctz(pm.link_speed_ext_active);
  } else if (pm.link_speed_active) {
    sp = __builtin_ctz(pm.link_speed_active);
  }
  return static_cast<uint32_t>(kLane[sp] * lanes);
}

}  // namespace

UmadService::UmadService(zmq::context_t& ctx, const std::string& endpoint,
                         const std::string& direct_path, Fabric& f, const scenario::Scenario& s,
                         engine::Partition& part)
    : sock_(ctx, zmq::socket_type::router),
      f_(f),
      s_(s),
      part_(part),
      endpoint_(endpoint),
      deliver_msg_(std::make_unique<umad::FromFabric>()) {
  sock_.set(zmq::sockopt::linger, 0);
  // Sending to a client that went away fails at once (EHOSTUNREACH), so it can be forgotten.
  sock_.set(zmq::sockopt::router_mandatory, 1);
  // Never drop a completion or a reply: with the default high-water mark of 1000 messages, a
  // ROUTER that may not block says EAGAIN for a program that reads slowly (eight MPI ranks
  // spinning on two cores), and the message was lost, and the job hung. Completions queued here
  // are bounded by the programs' own queue depths, as on an HCA; MADs for a program that is
  // alive but stopped are not.
  sock_.set(zmq::sockopt::sndhwm, 0);
  sock_.set(zmq::sockopt::rcvhwm, 0);
  // A ToFabric is a few hundred bytes; a peer sending more is cut off before it is buffered.
  sock_.set(zmq::sockopt::maxmsgsize, int64_t{64} << 10);
  sock_.bind(endpoint);
  if (!direct_path.empty()) local_ = std::make_unique<LocalChannel>(direct_path);
  for (auto& d : f_.devices) {
    if (d) d->SetMadClient(this);
    if (auto* h = dynamic_cast<hca::Hca*>(d.get())) h->SetVerbsClient(this);
  }
}

UmadService::~UmadService() {
  for (auto& d : f_.devices) {
    if (d) d->SetMadClient(nullptr);
    if (auto* h = dynamic_cast<hca::Hca*>(d.get())) h->SetVerbsClient(nullptr);
  }
}

void UmadService::ForgetDeparted() {
  std::set<std::string> ids;
  for (const auto& [key, v] : attached_)
    for (const Client& c : v) ids.insert(c.routing_id);
  for (const auto& [id, sess] : sessions_) ids.insert(sess.routing_id);
  // The kernel reports the direct channel's departures itself (and an empty packet would read
  // as a hang-up there).
  for (const std::string& id : ids)
    if (!LocalChannel::IsLocalId(id)) Reply(id, std::string());
}

size_t UmadService::attached_clients() const {
  size_t n = 0;
  for (const auto& [key, v] : attached_) n += v.size();
  return n;
}

int UmadService::FindNode(const std::string& name) const {
  int n = s_.topo.FindNode(name);
  if (n >= 0) return n;
  for (size_t i = 0; i < s_.topo.nodes.size(); ++i)
    if (s_.topo.nodes[i].description == name) return static_cast<int>(i);
  return -1;
}

void UmadService::AddPollItems(std::vector<zmq::pollitem_t>* items) {
  if (local_) local_->AddPollItems(items);
}

void UmadService::Poll(bool zmq_ready, const zmq::pollitem_t* ready) {
  if (local_)
    local_->Poll(
        ready, [this](const std::string& id, std::string_view body) { Handle(id, body); },
        [this](const std::string& id) { Forget(id); });
  if (!zmq_ready) return;
  zmq_used_ = true;
  for (;;) {
    zmq::message_t id, body;
    if (!sock_.recv(id, zmq::recv_flags::dontwait)) return;
    if (!id.more() || !sock_.recv(body, zmq::recv_flags::dontwait)) continue;
    while (body.more()) {  // not ours: skip extra frames
      zmq::message_t extra;
      if (!sock_.recv(extra, zmq::recv_flags::dontwait)) break;
      body.move(extra);
    }
    Handle(id.to_string(), body.to_string_view());
  }
}

void UmadService::Reply(const std::string& routing_id, const std::string& body) {
  // What happened before the reply reaches the program first: the flush completions of a QP
  // moved to Error are there when ibv_modify_qp returns.
  FlushCompletions();
  if (!SendTo(routing_id, body)) Forget(routing_id);  // the program exited without detaching
}

bool UmadService::SendTo(const std::string& routing_id, const std::string& body) {
  if (LocalChannel::IsLocalId(routing_id)) return local_ && local_->Send(routing_id, body);
  zmq_used_ = true;
  try {
    zmq::send_result_t r =
        sock_.send(zmq::buffer(routing_id), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    if (r) sock_.send(zmq::buffer(body), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    if (e.num() != EHOSTUNREACH) throw;
    return false;
  }
  return true;
}

void UmadService::ForgetFailed() {
  std::vector<std::string> gone;
  gone.swap(failed_);
  for (const std::string& id : gone) Forget(id);
}

void UmadService::Forget(const std::string& routing_id) {
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    uint32_t id = it->first;
    ++it;
    if (sessions_[id].routing_id == routing_id) CloseSession(id);
  }
  for (auto& [key, v] : attached_) {
    size_t before = v.size();
    std::erase_if(v, [&](const Client& c) { return c.routing_id == routing_id; });
    if (v.size() != before && v.empty())  // its SM, if it was one, is gone with it
      f_.devices[key.first]->port_mgmt(key.second).capability_mask &= ~mad::port_info::kCapIsSm;
  }
}

void UmadService::Handle(const std::string& routing_id, std::string_view body) {
  if (transport::IsMadFrame(body.data(), body.size())) {
    transport::MadFrameHeader h;
    const uint8_t* mad;
    size_t len;
    // Not a frame of ours, or not one a program sends: nothing to answer, as for protobuf.
    if (transport::DecodeMadFrame(body.data(), body.size(), transport::MadFrameKind::kSend, &h,
                                  &mad, &len))
      HandleSend(routing_id, h.handle, h.addr, mad, len);
    return;
  }
  umad::ToFabric req;
  if (!req.ParseFromArray(body.data(), static_cast<int>(body.size())))
    return;  // not a message of ours; nothing to answer
  umad::FromFabric rep;
  rep.set_request(req.request());
  auto describe = [&](int n, umad::CaAttributes* ca) {
    mgmt::ManagedNode& d = *f_.devices[n];
    const mgmt::NodeMgmt& nm = d.node_mgmt();
    // Named and numbered as a ConnectX-5 on a host of its own is (docs/verbs.md).
    ca->set_ca_name(kCaName);
    ca->set_node(s_.topo.nodes[n].name);
    ca->set_node_type(nm.node_type);
    ca->set_num_ports(static_cast<uint32_t>(d.num_ports()));
    ca->set_node_guid(nm.node_guid);
    ca->set_system_guid(nm.system_guid);
    ca->set_fw_ver(kFirmwareVersion);
    char rev[16];
    std::snprintf(rev, sizeof rev, "0x%x", nm.revision);
    ca->set_hw_rev(rev);
    ca->set_ca_type("MT" + std::to_string(nm.device_id));
    ca->set_vendor_id(nm.vendor_id);
    ca->set_device_id(nm.device_id);
    ca->set_revision(nm.revision);
    ca->set_board_id("IBEMU_" + std::to_string(nm.device_id));
    ca->set_node_description(nm.description);
    for (int p = 1; p <= d.num_ports(); ++p) {
      const mgmt::PortMgmt& pm = d.port_mgmt(p);
      umad::PortAttributes* pa = ca->add_ports();
      pa->set_port(static_cast<uint32_t>(p));
      pa->set_lid(pm.lid);
      pa->set_lmc(pm.lmc);
      pa->set_sm_lid(pm.sm_lid);
      pa->set_sm_sl(pm.sm_sl);
      pa->set_state(d.port_state(p));
      pa->set_phys_state(d.phys_state(p));
      pa->set_rate(RateGbps(pm));
      pa->set_capmask(pm.capability_mask);
      pa->set_gid_prefix(pm.gid_prefix);
      pa->set_port_guid(pm.port_guid);
      pa->set_link_width_active(pm.link_width_active);
      pa->set_link_speed_active(pm.link_speed_active);
      for (uint16_t k : pm.pkeys) pa->add_pkeys(k);
      pa->set_link_speed_ext_active(pm.link_speed_ext_active);
      pa->set_mtu_cap(pm.mtu_cap);
      pa->set_neighbor_mtu(pm.neighbor_mtu);
      pa->set_vl_cap(pm.vl_cap);
      pa->set_subnet_timeout(pm.subnet_timeout);
      pa->set_capmask2(pm.capability_mask2);
      pa->set_p_key_violations(pm.p_key_violations);
      pa->set_q_key_violations(pm.q_key_violations);
      pa->set_guid_cap(pm.guid_cap);
    }
  };
  auto ca_node = [&](const std::string& name, std::string* err) {
    int n = FindNode(name);
    if (n < 0) {
      *err = "no node '" + name + "' in " + s_.topology_source;
    } else if (s_.topo.nodes[n].type != topology::NodeType::kCa) {
      *err = "node '" + name + "' is a switch; attach to a channel adapter port";
      n = -1;
    }
    return n;
  };
  switch (req.body_case()) {
    case umad::ToFabric::kQuery: {
      std::string err;
      int n = ca_node(req.query().node(), &err);
      umad::Described* d = rep.mutable_described();
      d->set_ok(n >= 0);
      d->set_error(err);
      if (n >= 0) describe(n, d->mutable_ca());
      Reply(routing_id, rep.SerializeAsString());
      return;
    }
    case umad::ToFabric::kAttach: {
      const umad::Attach& a = req.attach();
      std::string err;
      int n = ca_node(a.node(), &err);
      // Compared unsigned: a port number of 2^31 or more must not turn negative on the way.
      if (n >= 0 &&
          (a.port() < 1 || a.port() > static_cast<uint32_t>(s_.topo.nodes[n].num_ports))) {
        err = "node '" + a.node() + "' has no port " + std::to_string(a.port()) + " (ports 1.." +
              std::to_string(s_.topo.nodes[n].num_ports) + ")";
        n = -1;
      }
      // A real host runs out of umad files long before this; a client that does not is broken
      // or hostile, and must not grow the fabric's memory without bound.
      size_t held = 0;
      for (const auto& [key, v] : attached_)
        held += std::count_if(v.begin(), v.end(),
                              [&](const Client& c) { return c.routing_id == routing_id; });
      if (n >= 0 && held >= kMaxAttachmentsPerClient) {
        err = "too many attachments from one client (" + std::to_string(held) + ")";
        n = -1;
      }
      umad::Attached* r = rep.mutable_attached();
      r->set_ok(n >= 0);
      r->set_error(err);
      r->set_handle(a.handle());
      r->set_mad_frames(true);
      if (n >= 0) {
        auto& v = attached_[{static_cast<engine::LpId>(n), static_cast<int>(a.port())}];
        // Attach is idempotent: a library that reconnects attaches again with the same handle.
        std::erase_if(v, [&](const Client& c) {
          return c.routing_id == routing_id && c.handle == a.handle();
        });
        v.push_back({routing_id, a.handle(), a.mad_frames()});
        describe(n, r->mutable_ca());
      }
      Reply(routing_id, rep.SerializeAsString());
      return;
    }
    case umad::ToFabric::kDetach:
      for (auto& [key, v] : attached_)
        std::erase_if(v, [&](const Client& c) {
          return c.routing_id == routing_id && c.handle == req.detach().handle();
        });
      return;
    case umad::ToFabric::kIssm:
      for (auto& [key, v] : attached_)
        for (const Client& c : v)
          if (c.routing_id == routing_id && c.handle == req.issm().handle()) {
            mgmt::PortMgmt& pm = f_.devices[key.first]->port_mgmt(key.second);
            if (req.issm().is_sm())
              pm.capability_mask |= mad::port_info::kCapIsSm;
            else
              pm.capability_mask &= ~mad::port_info::kCapIsSm;
          }
      return;
    case umad::ToFabric::kSend: {
      const umad::Send& sd = req.send();
      HandleSend(routing_id, sd.handle(), transport::FromProto(sd.addr()),
                 reinterpret_cast<const uint8_t*>(sd.mad().data()), sd.mad().size());
      return;
    }
    case umad::ToFabric::kVerbs:
      HandleVerbs(routing_id, req.request(), req.verbs());
      return;
    default:
      return;
  }
}

void UmadService::HandleSend(const std::string& routing_id, uint32_t handle,
                             const transport::MadFrameAddress& addr, const uint8_t* mad,
                             size_t len) {
  if (len != engine::kMadBytes) return;  // the library never sends other sizes
  for (auto& [key, v] : attached_)
    for (const Client& c : v) {
      if (c.routing_id != routing_id || c.handle != handle) continue;
      mgmt::ManagedNode& d = *f_.devices[key.first];
      engine::Packet* pkt = part_.pool().Get();
      mgmt::MadAddress a;
      a.dlid = addr.lid;
      a.sl = static_cast<uint8_t>(addr.sl & 0xF);
      a.dest_qp = addr.qpn;
      a.qkey = addr.qkey;
      const mgmt::PortMgmt& pm = d.port_mgmt(key.second);
      uint32_t pi = addr.pkey_index;
      a.pkey = pi < pm.pkeys.size() && pm.pkeys[pi] ? pm.pkeys[pi] : 0xFFFF;
      mgmt::BuildMadPacket(pkt, a);
      std::memcpy(pkt->mad->data(), mad, engine::kMadBytes);
      engine::Event e;
      e.time = part_.now();
      e.lp = key.first;
      e.src = kInjectSource;
      e.seq = seq_++;
      e.kind = mgmt::ManagedNode::kMadFromClient;
      e.port = static_cast<uint16_t>(key.second);
      e.pkt = pkt;
      part_.Schedule(e);
      ++mads_in_;
      return;
    }
}

bool UmadService::Deliver(engine::LpId lp, int port, const engine::MadBytes& mad,
                          const mgmt::MadAddress& from) {
  auto it = attached_.find({lp, port});
  if (it == attached_.end() || it->second.empty()) return false;
  transport::MadFrameHeader h;
  h.kind = transport::MadFrameKind::kReceive;
  h.addr.lid = from.slid;
  h.addr.qpn = from.src_qp;
  h.addr.qkey = from.qkey;
  h.addr.sl = from.sl;
  // An SMP's completion (QP0) names index 0, as mlx5 reports it; a GMP's the entry its P_Key
  // matches.
  h.addr.pkey_index = from.dest_qp == 0 ? 0 : f_.devices[lp]->port_mgmt(port).PKeyIndex(from.pkey);
  // For a client that did not ask for frames: one message for every answer, its fields overwritten
  // (building and destroying a FromFabric with its Receive and Address for each cost more than
  // the rest of this function), filled when the first such client is met.
  umad::FromFabric& rep = *deliver_msg_;
  umad::Receive* r = nullptr;
  // Every program on the port sees it; each library keeps what its agents asked for, as the
  // kernel does between the files open on one port.
  // Called from inside the device's event: a client that has gone is not forgotten here, since
  // closing its verbs sessions would destroy QPs of an HCA that may be mid-event. It is
  // forgotten after the engine's step (ForgetFailed).
  FlushCompletions();
  for (const Client& c : it->second) {
    if (c.frames) {
      h.handle = c.handle;
      transport::EncodeMadFrame(h, mad.data(), mad.size(), &deliver_buf_);
    } else {
      if (!r) {
        r = rep.mutable_receive();
        r->set_mad(mad.data(), mad.size());
        transport::ToProto(h.addr, r->mutable_addr());
      }
      r->set_handle(c.handle);
      rep.SerializeToString(&deliver_buf_);
    }
    if (!SendTo(c.routing_id, deliver_buf_) &&
        std::find(failed_.begin(), failed_.end(), c.routing_id) == failed_.end())
      failed_.push_back(c.routing_id);
  }
  ++mads_out_;
  return true;
}

}  // namespace ibemu::fabric
