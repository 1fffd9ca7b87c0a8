// A channel adapter: per-QP send queues scheduled per VL (a throttled or idle QP never blocks
// another), segmentation to the path MTU, a host DMA rate on transmit and receive (the thesis test
// bed's PCIe limit), and RC ACKs. Receive buffers drain into the host at the host rate, which is
// how a slow end node backs up into the fabric.
#pragma once
#include <deque>
#include <memory>
#include <queue>
#include <random>
#include <unordered_map>
#include <vector>

#include "emulator/cc/hca_cc.h"
#include "emulator/hca/fifo.h"
#include "emulator/hca/flat_index.h"
#include "emulator/hca/hca_config.h"
#include "emulator/hca/traffic_source.h"
#include "emulator/hca/verbs_qp.h"
#include "emulator/link/fabric_context.h"
#include "emulator/mgmt/managed_node.h"
#include "emulator/policy/input_queuing.h"
#include "emulator/policy/vl_arbiter.h"
#include "emulator/stats/flow_stats.h"

namespace ibemu::hca {

using engine::Packet;

class Hca : public mgmt::ManagedNode, private cc::HcaView {
 public:
  Hca(engine::LpId id, std::string name, int num_ports, const HcaConfig& cfg,
      const link::FabricContext* ctx, stats::FlowTable* flows, uint64_t seed);

  void set_lid(int port, uint16_t lid) { port_mgmt_[port].lid = lid; }
  uint16_t lid(int port) const { return port_mgmt_[port].lid; }
  void SetSl2Vl(int port, int sl, int vl) { sl2vl_[port][sl] = static_cast<uint8_t>(vl); }
  // The SL each destination LID must be reached on from `port` (a routing engine's path SLs,
  // what an SA PathRecord would answer: dor's dateline bits on a torus); synthetic QPs of that
  // port use it instead of their traffic entry's SL.
  void SetPathSl(int port, std::vector<uint8_t> by_lid) {
    if (path_sl_.size() <= static_cast<size_t>(port)) path_sl_.resize(port + 1);
    path_sl_[port] = std::move(by_lid);
  }
  // The SL for a packet from `port` to `dlid`: the path's when the routing engine gives one,
  // else `sl`. Answers (ACKs, CNPs) take the path back's: dor's dateline bits differ from the
  // way there when a ring is crossed half way round, both ways being shortest.
  uint8_t PathSl(int port, uint16_t dlid, uint8_t sl) const {
    return port < static_cast<int>(path_sl_.size()) && dlid < path_sl_[port].size()
               ? path_sl_[port][dlid]
               : sl;
  }

  // mgmt::ManagedDevice
  bool is_switch() const override { return false; }
  int Sl2VlEntry(int in, int out, int sl) const override { return sl2vl_[in][sl]; }
  void SetSl2VlEntry(int in, int out, int sl, int vl) override { SetSl2Vl(in, sl, vl); }
  void VlArbChanged(int port) override;
  void AddSource(const TrafficSource& s) { sources_.push_back({s, false, {}}); }
  // The congestion-control mechanism's instance for this HCA (null: none).
  void SetCc(std::unique_ptr<cc::HcaCc> c) { cc_hooks_ = std::move(c); }

  void Start() override;

  // Verbs programs attached through the fabric's service (emulator/fabric/umad_service.cc):
  // their memory regions and QPs, and the transport that runs them (verbs_transport.cc). Each
  // returns 0 or an errno. Posts take effect at virtual time `at`.
  static constexpr uint32_t kVerbsQpnBase = 0x400000;
  void SetVerbsClient(VerbsClient* c) { verbs_client_ = c; }
  int RegMr(const MemoryRegion& mr, uint32_t* lkey, uint32_t* rkey);
  int DeregMr(uint32_t session, uint32_t lkey);
  static constexpr uint32_t kMaxVerbsWr = 32768;  // ibv_device_attr.max_qp_wr
  int CreateVerbsQp(uint32_t session, pid_t pid, uint32_t pd, int type, bool sq_sig_all,
                    uint32_t max_send_wr, uint32_t max_recv_wr, uint32_t srq, uint32_t* qpn);
  static constexpr uint32_t kSrqBase = 0x100;
  int CreateSrq(uint32_t session, uint32_t pd, uint32_t max_wr, uint32_t limit, uint32_t* srqn);
  int ModifySrq(uint32_t session, uint32_t srqn, uint32_t mask, uint32_t max_wr, uint32_t limit);
  int DestroySrq(uint32_t session, uint32_t srqn);
  void PostSrqRecv(uint32_t session, uint32_t srqn, std::vector<RecvWqe> wqes);
  int ModifyVerbsQp(uint32_t session, uint32_t qpn, const VerbsQpAttr& a, SimTime at);
  int DestroyVerbsQp(uint32_t session, uint32_t qpn);
  void PostVerbsSend(uint32_t session, uint32_t qpn, std::vector<SendWqe> wqes, SimTime at);
  void PostVerbsRecv(uint32_t session, uint32_t qpn, std::vector<RecvWqe> wqes, SimTime at);
  // A program that went away: its QPs and MRs go.
  void CloseVerbsSession(uint32_t session);
  // The results flow a verbs QP's data is counted in (engine::kNoFlow: none yet), and giving it
  // one; the fabric does when the QP is connected (verbs_requests.cc).
  uint32_t VerbsFlow(uint32_t qpn);
  void SetVerbsFlow(uint32_t qpn, uint32_t flow);

 private:
  enum Kind : uint16_t {
    kMessage = kFirstDeviceKind,  // a = source: a message arrives (or a saturating source resumes)
    kSinkDone,                    // port, pkt: the host has taken the packet
    kCcTimer,                     // a, b: the mechanism's (HcaCc::OnTimer)
    kVerbsKick,                   // a = QP index: posted work, or an RNR wait that ended
    kVerbsTimer,                  // a = QP index, b = generation: the requester's ACK timeout
    kVerbsLoopback,               // port, pkt: a verbs packet to this port's own LID
    kTraceStep,                   // a = source: a replayed rank goes on (trace_replay.cc)
  };

  struct TraceState {
    size_t pc = 0;                         // the rank's next operation
    bool blocked = false;                  // in a receive whose message has not arrived whole
    std::vector<uint32_t> arrived, taken;  // [peer rank]: messages arrived whole, received
    std::unordered_map<uint16_t, uint32_t> rank_of;  // wire LID -> rank, built on first use
  };
  struct SourceState {
    TrafficSource cfg;
    bool waiting = false;  // a saturating source whose last message is still being segmented
    TraceState trace;      // a replayed rank's (cfg.trace)
  };
  struct QueuePair {
    uint32_t source = 0;
    uint16_t dlid = 0;
    uint8_t sl = 0;       // the SL of the front message's packets
    uint8_t path_sl = 0;  // the path's SL to dlid (synthetic QPs)
    uint8_t vl = 0;       // the VL ring the QP is in (its front message's)
    uint8_t resv6a = 0;   // BTH Resv6a bits every packet of the front message carries
    uint8_t port = 1;
    uint32_t qpn = 0;
    uint32_t psn = 0;
    struct Message {
      uint32_t bytes;
      SimTime created;
    };
    Fifo<Message> messages;
    uint32_t sent_in_msg = 0;  // bytes of the front message already segmented
    bool in_ring = false;      // has work: in its VL's ring, or parked
    bool parked = false;       // out of the ring until its gate passes (PortState::parked)
    SimTime gate = 0;          // sends nothing before this (congestion control's per-QP gate)
    VerbsQp* verbs = nullptr;  // a verbs program's QP (dlid is then a wire LID)
  };
  struct Ring {
    std::vector<uint32_t> qps;
    size_t next = 0;
    // Takes entry idx out, keeping the round robin pointed at the same next QP.
    void Remove(size_t idx) {
      qps.erase(qps.begin() + static_cast<std::ptrdiff_t>(idx));
      if (idx < next) --next;
      if (next >= qps.size()) next = 0;
    }
  };
  struct PortState {
    engine::PacketQueue vl15;     // SMPs: no credits, before everything else
    engine::PacketQueue control;  // ACKs, CNPs and GS MADs: sent before data on their VL
    std::vector<Ring> rings;      // [VL]
    std::unique_ptr<policy::VlArbiter> vlarb;
    std::array<SimTime, 16> sl_gate{};  // congestion control's per-SL gate
    // QPs with work whose gate is closed, by the time it opens: kept out of the rings so that
    // arbitration does not step over every throttled QP each time (min-heap; an entry whose QP
    // has moved on is skipped).
    std::priority_queue<std::pair<SimTime, uint32_t>, std::vector<std::pair<SimTime, uint32_t>>,
                        std::greater<>>
        parked;
  };

  void HandleDevice(const engine::Event& e) override;
  void OnPacket(int p, Packet* pkt) override;
  void Arbitrate(int p) override;
  bool HasWaiting(int p) const override;

  void NewMessage(uint32_t source);
  // Queues a message of `bytes` from `source` to `dlid` on its QP (the generator's and the
  // trace's common path).
  void QueueMessage(uint32_t source, uint16_t dlid, uint32_t bytes);
  // trace_replay.cc: runs a replayed rank until it computes, waits for a message or ends; and a
  // message of a replayed application that arrived whole at this HCA.
  void TraceStep(uint32_t source);
  void TraceArrived(uint32_t flow, uint16_t slid);
  void ScheduleNextArrival(uint32_t source, SimTime after);
  SimTime NextOnTime(const TrafficSource& s, SimTime t) const;
  uint16_t PickDestination(SourceState& s);
  uint32_t QpFor(uint32_t source, uint16_t dlid);
  // Latches how the front message of synthetic QP qi travels (its SL, VL and header bits: the
  // mechanism's RouteMessage); returns the VL.
  int RouteFront(uint32_t qi);
  uint32_t NextSegment(const QueuePair& qp) const;
  // When the QP may send next: the later of its own gate and its SL's.
  SimTime AllowedAt(const QueuePair& qp) const {
    return std::max(qp.gate, pstate_[qp.port].sl_gate[qp.sl]);
  }
  bool QpReady(const QueuePair& qp, int p, int vl) const;
  void SendCnp(int p, Packet& marked);
  // Takes ring r's entry `idx` (a QP whose gate is closed) out of the ring into the port's parked
  // heap, keeping the ring's round-robin position.
  void Park(int p, Ring& r, size_t idx, SimTime until);
  // Puts the parked QPs whose gates have opened back at the end of their rings; returns when the
  // next one opens (INT64_MAX: none parked).
  SimTime Unpark(int p);
  // A response (ACK, CNP) for one of this HCA's QPs: told to congestion control.
  void OnResponse(Packet* pkt);
  void SendData(int p, int vl, uint32_t qp_index);
  // Takes QP qi out of its VL's ring (it has nothing more to send).
  void LeaveRing(int p, int vl, uint32_t qi);

  // verbs_transport.cc
  VerbsQp* VerbsQpOf(uint32_t qpn, uint32_t* qi = nullptr);
  bool VerbsReady(const QueuePair& qp, int p, int vl) const;
  void VerbsSendData(int p, int vl, uint32_t qi);
  void VerbsKick(uint32_t qi);
  void VerbsTimer(uint32_t qi, uint64_t generation);
  // The QP's port went down: queued sends that were never sent start their retry count too.
  void VerbsPortDown(uint32_t qi);
  void VerbsReceive(int p, Packet* pkt);
  uint32_t VerbsReadResponses(int p, VerbsQp& q, Packet* pkt, uint32_t psn);
  void VerbsAtomicAck(int p, VerbsQp& q, const Packet& request, uint32_t psn, uint64_t orig);
  void VerbsRequest(int p, VerbsQp& q, Packet* pkt);
  void VerbsResponse(VerbsQp& q, uint32_t qi, Packet* pkt);
  void VerbsAck(int p, VerbsQp& q, const Packet& request, uint8_t syndrome, uint32_t psn);
  void VerbsQueueResponse(int p, Packet* pkt, uint16_t dlid);
  bool PKeyAccepted(int p, const VerbsQp& q, uint16_t pkey) const;
  // Transmits a verbs data packet, or loops it back when it is for this port's own LID.
  void Send(int p, Packet* pkt, int vl);
  Packet* VerbsPacket(int p, const VerbsQp& q, uint8_t opcode, uint32_t psn, bool ack_req,
                      uint16_t dlid, uint8_t sl, uint32_t dest_qp);
  void VerbsFinishPacket(Packet* pkt, std::vector<uint8_t> payload);
  // Makes a UD datagram of a global address handle carry a GRH.
  void AddGrh(int p, Packet* pkt, const SendWqe& w);
  const MemoryRegion* FindMr(uint32_t key, bool remote) const;
  // The region `key` names if the QP may use it for `access` at [addr, addr + n) (the range
  // unchecked when `bounds` is false): same session and PD, the region's access flags, and for a
  // remote key the QP's own. Null otherwise.
  const MemoryRegion* Region(const VerbsQp& q, uint32_t key, bool remote, uint32_t access,
                             uint64_t addr, uint64_t n, bool bounds = true) const;
  // Reads or writes [addr, addr + n) through key, checking the region, its PD and its access;
  // with `local` null, only checks.
  bool VerbsDma(const VerbsQp& q, uint32_t key, bool remote, uint32_t access, uint64_t addr,
                const std::vector<iovec>* local, size_t n, bool write);
  bool VerbsDma(const VerbsQp& q, uint32_t key, bool remote, uint32_t access, uint64_t addr,
                void* buf, size_t n, bool write);
  // Results: a data packet of QP qi leaves (bytes and the mechanism's throttling level), or the
  // payload of a peer's packet is taken in order.
  void CountVerbsSent(uint32_t qi, const VerbsQp& q, const Packet& pkt);
  void CountVerbsReceived(const Packet& pkt);
  // A packet's bytes [offset, offset + n) of the WR's message, from its inline data or from the
  // read-ahead (refilled with up to kDmaChunk bytes when it does not hold them).
  bool GatherSend(const VerbsQp& q, SendWqe& w, uint32_t offset, uint32_t n,
                  std::vector<uint8_t>* out);
  bool Gather(const VerbsQp& q, const std::vector<Sge>& sges, uint32_t offset, uint32_t n,
              const std::vector<iovec>& into);
  // Writes data to the SGEs' bytes [offset, offset + n); with data null, only checks that it may.
  bool Scatter(const VerbsQp& q, const std::vector<Sge>& sges, uint32_t offset,
               const std::vector<iovec>* data, uint32_t n);
  void CompleteSend(VerbsQp& q, const SendWqe& w, int status);
  void CompleteRecv(VerbsQp& q, const RecvWqe& r, int status, int opcode, uint32_t len,
                    const Packet* pkt);
  // The QP goes to Error: what is queued completes with IBV_WC_WR_FLUSH_ERR.
  void VerbsError(VerbsQp& q, uint32_t qi);
  // The ACK timer while WRs are unacknowledged (else the running one is made void), and a new
  // one unconditionally.
  void ArmAckTimer(VerbsQp& q, uint32_t qi);
  void StartAckTimer(VerbsQp& q, uint32_t qi);
  VerbsSrq* SrqOf(uint32_t srqn);
  // The next receive WR of the QP (from its SRQ if it has one); false when there is none.
  bool TakeRecv(VerbsQp& q, RecvWqe* out);
  // Puts the receive WR the QP took (cur_recv) back at the head of its queue.
  void ReturnRecv(VerbsQp& q);
  void VerbsUdSend(int p, int vl, uint32_t qi);
  void VerbsUdReceive(int p, VerbsQp& q, Packet* pkt);
  // The SL (and so the VL ring) the QP's next packet goes on: the WR's for UD.
  uint8_t NextSl(const VerbsQp& q) const;
  void Rewind(VerbsQp& q);
  void Deliver(int p, Packet* pkt);
  void OnManagementPacket(int p, Packet* pkt) override;
  void OnClientMad(int p, Packet* pkt) override;
  void OnLinkChanged(int p, bool up) override;
  // Handles an SMP for this node's SMA that arrived on (or was sent from) port p and sends the
  // response; hands what the SMA does not answer to the attached program.
  void RunSma(int p, Packet* pkt, const mgmt::MadAddress& from);
  void RunGsAgents(int p, Packet* pkt, const mgmt::MadAddress& from);
  void SendVl15(int p, Packet* pkt);
  void SendGmp(int p, Packet* pkt);
  // Gives a built ACK, CNP or GMP for `dlid` its id, creation time and credit class, and queues
  // it on the port's control queue, ahead of data on its VL.
  void QueueControl(int p, Packet* pkt, uint16_t dlid);
  double Uniform01();

  // cc::HcaView
  SimTime Now() const override { return now(); }
  int NumPorts() const override { return num_ports(); }
  mgmt::CcState& Cca(int port) override { return cc_[port]; }
  uint32_t NumQps() const override { return static_cast<uint32_t>(qps_.size()); }
  int QpPort(uint32_t qp) const override { return qps_[qp].port; }
  int QpSl(uint32_t qp) const override { return qps_[qp].sl; }
  uint32_t QpNumber(uint32_t qp) const override { return qps_[qp].qpn; }
  uint16_t QpRemoteLid(uint32_t qp) const override { return ctx_->WireLid(qps_[qp].dlid); }
  SimTime SerializationTime(int port, uint32_t bytes) const override {
    return ports_[port].link.rate.SerializationTime(bytes);
  }
  uint32_t Mtu() const override { return cfg_.mtu; }
  void SetQpGate(uint32_t qp, SimTime t) override;
  void SetSlGate(int port, int sl, SimTime t) override;
  SimTime QpGate(uint32_t qp) const override { return qps_[qp].gate; }
  SimTime SlGate(int port, int sl) const override { return pstate_[port].sl_gate[sl]; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { Post(id(), t, kCcTimer, 0, a, b); }
  void SendControl(int port, uint32_t a, uint64_t b) override { Device::SendControl(port, a, b); }
  void Report(uint32_t a, uint64_t b) override { SendSideBand(*ctx_, a, b); }
  int NumEndNodes() const override { return ctx_->num_destinations; }
  uint16_t Lid(int port) const override { return lid(port); }
  int Sl2Vl(int port, int sl) const override { return sl2vl_[port][sl]; }
  int DataVls(int port) const override { return ports_[port].data_vls; }
  void SendMad(int port, uint16_t dlid, int sl, int vl, const uint8_t* mad) override;
  void OnControl(int p, uint32_t a, uint64_t b) override {
    if (cc_hooks_) cc_hooks_->OnControl(*this, p, a, b);
  }

  HcaConfig cfg_;
  const link::FabricContext* ctx_;
  stats::FlowTable* flows_;
  std::vector<std::array<uint8_t, 16>> sl2vl_;
  std::vector<std::vector<uint8_t>> path_sl_;  // [port][LID], empty: the traffic's SL
  std::vector<PortState> pstate_;
  std::vector<SourceState> sources_;
  std::vector<uint32_t> trace_sources_;  // the sources that are replayed ranks
  std::vector<QueuePair> qps_;
  // (source, DLID) -> index in qps_. Looked up for every message.
  FlatIndex qp_index_;
  SimTime dma_free_at_ = 0;   // host -> HCA (PCIe reads), shared by all ports
  SimTime sink_free_at_ = 0;  // HCA -> host (PCIe writes), shared by all ports
  // Message sequence number of each responder QP, by requester LID and QP (AETH MSN), asked
  // for every acknowledged packet.
  FlatIndex msn_;
  uint32_t& Msn(uint16_t slid, uint32_t qp);
  std::mt19937_64 rng_;
  std::unique_ptr<cc::HcaCc> cc_hooks_;
  // Verbs: QPs by index into qps_ (null when destroyed), MRs by lkey.
  std::vector<std::unique_ptr<VerbsQp>> verbs_qps_;
  std::unordered_map<uint32_t, MemoryRegion> mrs_;
  std::vector<std::unique_ptr<VerbsSrq>> srqs_;  // by srqn - kSrqBase; null when destroyed
  uint32_t next_key_ = 0x100;
  VerbsClient* verbs_client_ = nullptr;
};

}  // namespace ibemu::hca
