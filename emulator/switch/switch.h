// An IB switch: per-port, per-VL input buffers in 64-byte credits, LFT forwarding on DLID, SL2VL
// per (input port, output port), VL arbitration and crossbar arbitration at each output, and
// virtual cut-through.
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "common/mad/mad_header.h"
#include "emulator/cc/switch_cc.h"
#include "emulator/link/fabric_context.h"
#include "emulator/mgmt/managed_node.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/input_queuing.h"
#include "emulator/policy/vl_arbiter.h"
#include "emulator/switch/switch_config.h"

namespace ibemu::sw {

using engine::Packet;
using link::SimTime;

class Switch : public mgmt::ManagedNode, private cc::SwitchView {
 public:
  static constexpr uint8_t kNoRoute = 0xFF;

  Switch(engine::LpId id, std::string name, int num_ports, const SwitchConfig& cfg,
         const link::FabricContext* ctx);

  // Linear forwarding table: DLID -> output port (IBA 18.2.4.3.2); kNoRoute drops.
  std::vector<uint8_t>& lft() { return lft_; }
  // SL2VL for packets entering on `in` and leaving on `out` (IBA 7.6.6).
  void SetSl2Vl(int in, int out, int sl, int vl) {
    sl2vl_[Sl2VlIndex(in, out, sl)] = static_cast<uint8_t>(vl);
    if (vl != sl2vl_common_[sl]) sl2vl_uniform_ = false;
  }
  int Sl2Vl(int in, int out, int sl) const {
    return sl2vl_uniform_ ? sl2vl_common_[sl] : sl2vl_[Sl2VlIndex(in, out, sl)];
  }
  uint16_t lid() const { return port_mgmt_[0].lid; }
  void set_lid(uint16_t l) { port_mgmt_[0].lid = l; }
  uint64_t dropped() const { return dropped_; }

  void Start() override;

  // mgmt::ManagedDevice
  bool is_switch() const override { return true; }
  uint8_t LftEntry(uint32_t lid) const override { return lid < lft_.size() ? lft_[lid] : kNoRoute; }
  void SetLftEntry(uint32_t lid, uint8_t port) override;
  int Sl2VlEntry(int in, int out, int sl) const override { return Sl2Vl(in, out, sl); }
  void SetSl2VlEntry(int in, int out, int sl, int vl) override { SetSl2Vl(in, out, sl, vl); }
  void VlArbChanged(int port) override;
  void PortInfoChanged(int port) override;

  // The congestion-control mechanism's instance for this switch (null: none), before Start: it
  // may give each input VL more queues (H5).
  void SetCc(std::unique_ptr<cc::SwitchCc> c);

 private:
  enum Kind : uint16_t {
    kHeadReady = kFirstDeviceKind,  // port = input, a = VL, b = queue
    kInputRelease,                  // port = input, a = VL | class << 8, b = blocks
    kCcTimer,                       // a, b: the mechanism's (SwitchCc::OnTimer)
    kOutputRelease,                 // port = output, a = VL, b = blocks: left the output buffer
    // A kInputRelease (port, a, b's low 32 bits) and then the kWake of output b >> 32, which fall
    // at one instant with nothing between them: a packet forwarded cut-through from a link of
    // the same speed is read out of its input when its tail leaves the output.
    kInputReleaseAndWake,
  };

  // A line each: arbitration walks the queues that request an output.
  struct alignas(64) Queue {
    engine::PacketQueue q;
    Queue* next_req = nullptr;
    SimTime read_free_at = 0;  // its own read port (SwitchConfig::read_port_per_queue)
    bool registered = false;
    uint8_t vl = 0;
    uint16_t in = 0;
    uint32_t index = 0;
    // While registered, what arbitration asks of the head (its wire bytes and output credit
    // class, and InputCanFeed's slack for it), taken at Register so that asking whether it can go
    // does not touch the packet: an output asks every requesting input, often several times
    // before one goes. The head does not change while the queue is registered.
    uint32_t head_bytes = 0;
    uint16_t head_class = 0;
    SimTime head_slack = 0;
    uint32_t head_blocks() const { return wire::CreditBlocks(head_bytes); }
  };
  static_assert(sizeof(Queue) == 64);
  // Aligned, with what every enqueue and dequeue reads first. The outputs an input requests are
  // in the switch's flat arrays (ReqTo, ReqToMask).
  struct alignas(64) Input {
    // The packet this input is receiving while it is queued (its tail still to come), for
    // SwitchView::ArrivedBlocks; null: none. Cleared when it leaves its queue, so the pointer is
    // never one the pool has handed out again.
    const Packet* arriving = nullptr;
    SimTime arriving_tail = 0;
    uint32_t arriving_blocks = 0;
    uint16_t arriving_out = 0;
    uint8_t arriving_vl = 0;
    int next_poke = 0;
    std::vector<uint32_t> bypassed;  // [input VL]: packets that left before the oldest one
  };
  // The queues of an input that request (output, VL), in the order they registered, and what
  // arbitration asks of the first one's head (its Queue::head_* fields, copied by SetFirst): an
  // output asks every requesting input whether it can go, and reading each input's queue for it
  // was a cache miss each time. No pointer to the last queue: to keep this to 16 bytes, an append
  // walks the list, which holds one queue but where an input has several for one output.
  struct ReqList {
    Queue* first = nullptr;
    uint32_t first_slack = 0;  // kSlackInQueue: larger than this holds; read the queue's
    uint16_t first_blocks = 0;
    uint16_t first_class = 0;
  };
  static_assert(sizeof(ReqList) == 16);
  static constexpr uint32_t kSlackInQueue = UINT32_MAX;
  static void SetFirst(ReqList& r, Queue* q) {
    r.first = q;
    if (!q) return;
    r.first_slack =
        q->head_slack < kSlackInQueue ? static_cast<uint32_t>(q->head_slack) : kSlackInQueue;
    r.first_blocks = static_cast<uint16_t>(q->head_blocks());
    r.first_class = q->head_class;
  }
  SimTime FirstSlack(const ReqList& r) const {
    return r.first_slack != kSlackInQueue ? r.first_slack : r.first->head_slack;
  }
  // An output's counts for one VL, together so that the ones a packet-hop touches share a cache
  // line (as three arrays over the VLs they were three lines).
  struct OutputVl {
    uint32_t pending = 0;  // requests registered
    // What congestion control reads of this output: the blocks queued for it at all inputs (per
    // input: Switch::QueuedFrom, Switch::ArrivingFrom) and how many inputs contribute.
    uint32_t queued_blocks = 0;
    uint32_t obuf_blocks = 0;  // in the output buffer
    uint16_t contributors = 0;
  };
  // Aligned, with what arbitration reads first: the arbiters, the starved VLs and VL 0's counts
  // in one cache line.
  struct alignas(64) Output {
    std::unique_ptr<policy::VlArbiter> vlarb;
    std::unique_ptr<policy::InputArbiter> xbar;
    // The VLs whose head waited for credits since that VL last transmitted (for CC).
    uint32_t starved_vls = 0;
    // vlarb's only VL (VlArbiter::only_vl), kept here so that arbitration on a fabric with one
    // data VL reads no line of the arbiter: ChooseVl, ChargeVl.
    int8_t only_vl = -1;
    std::array<OutputVl, policy::kMaxVls> per_vl{};
    // The output buffer (SwitchConfig::output_buffer_blocks > 0): the packets the crossbar
    // moved in, per VL, and their blocks, held from the transfer's start until the tail has
    // left on the link. The crossbar writes one packet at a time into it.
    // With credit classes (VOQnet), a queue and a whole buffer per class, served in turn.
    std::vector<engine::PacketQueue> obuf;    // [VL * classes + class]
    std::vector<uint32_t> obuf_class_blocks;  // [VL * classes + class], with classes only
    std::vector<uint32_t> next_class;         // [VL]
    SimTime write_free_at = 0;
    int next_transfer_vl = 0;
  };

  void HandleDevice(const engine::Event& e) override;
  void SetVlArbiter(int out, std::unique_ptr<policy::VlArbiter> a) {
    outputs_[out].only_vl = static_cast<int8_t>(a->only_vl());
    outputs_[out].vlarb = std::move(a);
  }
  static int ChooseVl(Output& o, uint32_t eligible) {
    return policy::VlArbiter::Choose(*o.vlarb, o.only_vl, eligible);
  }
  static void ChargeVl(Output& o, int vl, uint32_t bytes) {
    policy::VlArbiter::Charge(*o.vlarb, o.only_vl, vl, bytes);
  }
  void OnPacket(int in, Packet* pkt) override;
  void Arbitrate(int out) override;
  bool HasWaiting(int out) const override {
    return Cioq() || !vl15_[out].empty() || Requested(out);
  }

  // The per-(output, VL, input) state every arbitration and enqueue reads, in flat arrays of the
  // switch rather than vectors of vectors in Output: one load from the switch to the element, not
  // three dependent ones through Output's vectors (each a likely cache miss).
  // The requests of input `in` for (out, vl), oldest first.
  ReqList& Req(int out, int vl, int in) { return req_[ReqIndex(out, vl, in)]; }
  const ReqList& Req(int out, int vl, int in) const { return req_[ReqIndex(out, vl, in)]; }
  // Bit in: input `in` has a request for (out, vl); mask_words_ words.
  uint64_t* ReqMask(int out, int vl) {
    return &req_mask_[(static_cast<size_t>(out) * cfg_.data_vls + vl) * mask_words_];
  }
  // Blocks queued at input `in` for (out, vl).
  uint32_t& QueuedFrom(int out, int vl, int in) { return queued_from_[ReqIndex(out, vl, in)]; }
  uint32_t QueuedFrom(int out, int vl, int in) const { return queued_from_[ReqIndex(out, vl, in)]; }
  // Bit in: Input::arriving of input `in` is bound for `out`; mask_words_ words.
  uint64_t* ArrivingFrom(int out) {
    return &arriving_from_[static_cast<size_t>(out) * mask_words_];
  }
  const uint64_t* ArrivingFrom(int out) const {
    return &arriving_from_[static_cast<size_t>(out) * mask_words_];
  }
  // Outputs input `in` has registered requests for (any VL), counted and as a mask
  // (mask_words_ words): only they need a look when the input's read bandwidth frees up.
  uint16_t& ReqTo(int in, int out) {
    return req_to_[static_cast<size_t>(in) * (num_ports() + 1) + out];
  }
  uint64_t* ReqToMask(int in) { return &req_to_mask_[static_cast<size_t>(in) * mask_words_]; }
  size_t ReqIndex(int out, int vl, int in) const {
    return (static_cast<size_t>(out) * cfg_.data_vls + vl) * (num_ports() + 1) + in;
  }
  size_t Sl2VlIndex(int in, int out, int sl) const {
    return (static_cast<size_t>(in) * (num_ports() + 1) + out) * 16 + sl;
  }
  void HeadChanged(Queue* q);
  // The link's own work before any data packet: true if the link is busy (woken when it frees)
  // or has just taken a flow-control packet or a VL15 SMP.
  bool LinkTaken(int out);
  // Takes the head request of queue `q` (input `in`, for (out, vl)) off the output's lists.
  void TakeRequest(int out, int vl, int in, Queue* q);
  // The crossbar reads the head of q out of input `in` for (out, vl): the buffer frees once it
  // is read (and CC's credit-return delay), the input's read bandwidth is taken. Returns the
  // packet and when the read ends.
  // With `deferred`, the release is not posted but described there, its sequence number
  // reserved, for PostRelease or a kInputReleaseAndWake.
  struct DeferredRelease {
    SimTime time = 0;
    uint64_t seq = 0;
    uint64_t self_posts = 0;  // self_posts() after the reservation
    uint16_t in = 0;
    uint32_t a = 0;  // VL | class << 8
    uint32_t blocks = 0;
  };
  Packet* ReadFromInput(int out, int vl, int in, Queue* q, SimTime* read_end,
                        DeferredRelease* deferred = nullptr);
  void PostRelease(const DeferredRelease& r) {
    PostReserved(r.seq, id(), r.time, kInputRelease, r.in, r.a, r.blocks);
  }
  // The kInputRelease: frees the buffer space (credits back upstream) and lets the outputs the
  // input requests look, now that its read port is free.
  void InputReleased(int in, int vl, int cls, uint32_t blocks);
  // The CIOQ switch (output_buffer.cc): Arbitrate(out) sends the next packet from the output
  // buffer when the link is free, and moves packets from the inputs into the buffer while it
  // has room and the crossbar can write.
  bool Cioq() const { return cfg_.output_buffer_blocks > 0; }
  // Whether any input requests output `out`, on any data VL.
  bool Requested(int out) const {
    for (int v = 0; v < ports_[out].data_vls; ++v)
      if (outputs_[out].per_vl[v].pending != 0) return true;
    return false;
  }
  void ArbitrateCioq(int out);
  void SendFromOutputBuffer(int out);
  void TransferToOutputBuffer(int out);
  // Whether output `out` could take a transfer now (its link, or with output buffers its
  // crossbar port, is free).
  bool OutputFree(int out) const {
    return Cioq() ? outputs_[out].write_free_at <= now() : ports_[out].tx_free_at <= now();
  }
  void DiscardOutputBuffer(int out);
  // The output port: a packet the crossbar read from `in`, marked (H1) and sent on `vl` no
  // earlier than `ready`; returns when its tail has left.
  SimTime SendToOutput(int out, int in, int vl, Packet* pkt, SimTime ready);
  void Register(Queue* q);
  // The first queue of `in` requesting `out` on `vl` whose head can go now, or null. With one
  // credit class and no rule that looks past an input's oldest request (oldest_only_), only that
  // request can go: asked inline, as arbitration asks it of every requesting input at every look.
  Queue* Servable(int out, int vl, int in) const {
    if (!oldest_only_ || ports_[out].classes != 1) return ServableAmong(out, vl, in);
    const ReqList& r = Req(out, vl, in);
    if (!r.first) return nullptr;
    // InputCanFeed and RoomAt of the first queue, from what the list holds of its head (with
    // oldest_only_ the read port is the input's).
    SimTime read_free = read_free_at_[in];
    bool feeds = Cioq() ? read_free <= now() : read_free <= now() + FirstSlack(r);
    return feeds && RoomFor(out, vl, r.first_class, r.first_blocks) ? r.first : nullptr;
  }
  // Servable's general case: per-destination classes, a mechanism that picks among the queues,
  // a read port per queue, or the bypass limit.
  Queue* ServableAmong(int out, int vl, int in) const;
  // Whether the input can feed the head of registered queue q to its output now: when it can supply
  // the packet no slower than the output link drains it. An input faster than its outputs feeds
  // several at once, a slower one only when idle.
  bool InputCanFeed(const Queue& q) const {
    // Into an output buffer the crossbar writes at its own rate, the rate it reads at.
    if (Cioq()) return ReadFreeAt(q) <= now();
    return ReadFreeAt(q) <= now() + q.head_slack;
  }
  // How much longer than the input's read of `bytes` the output link takes to send them.
  SimTime FeedSlack(int in, int out, uint32_t bytes) const {
    return std::max<SimTime>(0,
                             ports_[out].link.rate.SerializationTime(bytes) - ReadTime(in, bytes));
  }
  // When the read port that serves queue q is free.
  SimTime ReadFreeAt(const Queue& q) const {
    return cfg_.read_port_per_queue ? q.read_free_at : read_free_at_[q.in];
  }
  // Whether the head of registered queue q, requesting (out, vl), has room where it goes next:
  // the peer's credits, or with output buffers the buffer of (out, vl).
  bool RoomAt(int out, int vl, const Queue& q) const {
    return RoomFor(out, vl, q.head_class, q.head_blocks());
  }
  // The same for a head of `blocks` in output credit class `cls`.
  bool RoomFor(int out, int vl, uint16_t cls, uint32_t blocks) const {
    const link::Port& pt = ports_[out];
    if (Cioq()) {
      const Output& o = outputs_[out];
      uint32_t held =
          pt.classes == 1 ? o.per_vl[vl].obuf_blocks : o.obuf_class_blocks[pt.Slot(vl, cls)];
      return held + blocks <= obuf_class_capacity_;
    }
    return pt.tx[pt.Slot(vl, cls)].Fits(blocks);
  }
  // Whether the head of q (at input `in`, requesting (out, vl)) could be sent now.
  bool CanGo(int out, int vl, int in, const Queue* q) const;
  // The bypass limit (SwitchConfig::bypass_limit): whether the head of q may not go because the
  // input's oldest packet has been bypassed too often, and the oldest packet queued at (in, vl).
  bool HeldForOldest(int in, const Queue* q) const {
    return cfg_.bypass_limit > 0 &&
           inputs_[in].bypassed[q->vl] >= static_cast<uint32_t>(cfg_.bypass_limit) &&
           q->q.head != OldestAt(in, q->vl);
  }
  const Packet* OldestAt(int in, int vl) const;
  Queue* PickedQueue(int out, int vl, int in) const;
  // Crossbar ports run at the switch's fastest link rate times the speedup: the internal
  // datapath is built for the fastest port, slower links just fill it less.
  SimTime ReadTime(int in, uint32_t bytes) const {
    if (read_ps_per_byte_ != 0) return static_cast<SimTime>(bytes) * read_ps_per_byte_;
    return xbar_rate_.SerializationTime(bytes) * 1000 / cfg_.speedup_milli;
  }
  void Drop(int in, Packet* pkt);
  // Management: VL15 and packets for the switch's own LID.
  void OnManagementPacket(int in, Packet* pkt) override;
  // A directed-route SMP for this switch's SMI: relay it, answer it, or take it to or from the
  // LID-routed part that leads to the requester.
  void OnDirectedRoute(int in, Packet* pkt, mad::MadView m);
  void OnLinkChanged(int p, bool up) override;
  void ForwardVl15(int out, Packet* pkt);
  // Sends an SMP from this switch's LID to `dlid`, routed by the LFT on VL15.
  void SendSmpByLid(uint16_t dlid, Packet* pkt);
  // Queues a routed packet at input `in` for output `out`, eligible from `ready_at`.
  void Enqueue(int in, int in_vl, int out, int out_vl, SimTime ready_at, Packet* pkt);
  void DropVl15(int in, Packet* pkt);
  // Sends a GS MAD from the management port (port 0) through the crossbar like any data packet.
  void SendFromPort0(Packet* pkt);
  void SendTrap128();
  // Discards what waits for an output whose link went down (IBA 18.2.4.3: a switch discards
  // packets it cannot forward) and frees their input buffers.
  void DiscardQueuedFor(int out);
  void DiscardHead(Queue* q);
  // Keeps Output::queued_* in step as packets join and leave input queues.
  void CountQueued(int in, const Packet& p, bool add);

  // cc::SwitchView
  SimTime Now() const override { return now(); }
  int NumPorts() const override { return num_ports(); }
  int DataVls() const override { return cfg_.data_vls; }
  uint32_t VlCapacityBlocks() const override { return cfg_.vl_buffer_blocks; }
  uint32_t QueuedBlocks(int out, int vl) const override {
    return outputs_[out].per_vl[vl].queued_blocks;
  }
  uint32_t QueuedBlocksFrom(int in, int out, int vl) const override {
    return QueuedFrom(out, vl, in);
  }
  uint32_t ArrivedBlocks(int out, int vl) const override;
  uint32_t ArrivedBlocksFrom(int in, int out, int vl) const override;
  int ContributingInputs(int out, int vl) const override {
    return outputs_[out].per_vl[vl].contributors;
  }
  uint32_t InputUsedBlocks(int in, int vl) const override { return ports_[in].vl_used[vl]; }
  bool CreditStarved(int out, int vl) const override { return outputs_[out].starved_vls >> vl & 1; }
  uint32_t OutputBufferBlocks(int out, int vl) const override {
    return outputs_[out].per_vl[vl].obuf_blocks;
  }
  uint32_t OutputBufferCapacityBlocks() const override { return cfg_.output_buffer_blocks; }
  bool PeerIsSwitch(int port) const override {
    const link::LinkEnd& l = ports_[port].link;
    return l.connected && l.peer_lp < ctx_->switch_lp.size() && ctx_->switch_lp[l.peer_lp];
  }
  uint32_t PeerCreditBlocks(int out, int vl) const override {
    const link::Port& pt = ports_[out];
    return pt.tx[pt.Slot(vl, 0)].Available();
  }
  mgmt::CcState& Cca() override { return cc_[0]; }
  void PostTimer(SimTime t, uint32_t a, uint64_t b) override { Post(id(), t, kCcTimer, 0, a, b); }
  void SendControl(int port, uint32_t a, uint64_t b) override { Device::SendControl(port, a, b); }
  void Report(uint32_t a, uint64_t b) override { SendSideBand(*ctx_, a, b); }
  SimTime SerializationTime(int port, uint32_t bytes) const override {
    return ports_[port].link.rate.SerializationTime(bytes);
  }
  uint32_t QueueBlocks(int in, int vl, int q) const override { return QueueAt(in, vl, q).q.blocks; }
  uint32_t QueuePackets(int in, int vl, int q) const override { return QueueAt(in, vl, q).q.count; }
  const Packet* QueueHead(int in, int vl, int q) const override {
    return QueueAt(in, vl, q).q.head;
  }
  void Kick(int out) override { Arbitrate(out); }
  void OnControl(int p, uint32_t a, uint64_t b) override {
    if (cc_hooks_) cc_hooks_->OnControl(*this, p, a, b);
  }
  // Builds the queues of every input VL (their number, from the queuing policy and H5).
  void MakeQueues(int nq);

  SwitchConfig cfg_;
  const link::FabricContext* ctx_;
  std::vector<uint8_t> lft_;
  std::vector<engine::PacketQueue> vl15_;  // [output port]: SMPs, sent before any data VL
  uint64_t trap_tid_ = 0;
  std::vector<uint8_t> sl2vl_;
  // While every (input, output) pair maps as sl2vl_common_ (until a write says otherwise), the
  // lookup reads that one row: the full table is 22 KiB on a 36-port switch, a cache miss per
  // packet, and SMs usually program the same map everywhere.
  std::array<uint8_t, 16> sl2vl_common_{};
  bool sl2vl_uniform_ = true;
  std::vector<Input> inputs_;
  // Every input VL's queues, queues_per_vl_ each, in one array: QueueAt. As a vector per input VL
  // they took a dependent load through the input's vector of vectors, a cache miss an enqueue.
  std::vector<Queue> queues_;
  int queues_per_vl_ = 0;
  Queue* QueuesOf(int in, int vl) {
    return &queues_[(static_cast<size_t>(in) * cfg_.data_vls + vl) * queues_per_vl_];
  }
  const Queue* QueuesOf(int in, int vl) const {
    return &queues_[(static_cast<size_t>(in) * cfg_.data_vls + vl) * queues_per_vl_];
  }
  Queue& QueueAt(int in, int vl, int q) { return QueuesOf(in, vl)[q]; }
  const Queue& QueueAt(int in, int vl, int q) const { return QueuesOf(in, vl)[q]; }
  // [input]: the crossbar input's read bandwidth (see ReadTime) is shared by the transfers it
  // feeds; this is when the reads granted so far will be done. Apart from Input because
  // arbitration reads it for every requesting input: one cache line for a switch's inputs, not
  // one each.
  std::vector<SimTime> read_free_at_;
  std::vector<ReqList> req_;             // Req
  std::vector<uint64_t> req_mask_;       // ReqMask
  std::vector<uint32_t> queued_from_;    // QueuedFrom
  std::vector<uint64_t> arriving_from_;  // ArrivingFrom
  std::vector<uint16_t> req_to_;         // ReqTo
  std::vector<uint64_t> req_to_mask_;    // ReqToMask
  size_t mask_words_ = 1;                // 64-bit words of a mask over the ports
  std::vector<Output> outputs_;
  uint64_t dropped_ = 0;
  link::LinkRate xbar_rate_;
  // ReadTime's picoseconds per byte when they are whole (the crossbar's rate a whole number of
  // picoseconds per byte, and the speedup dividing it evenly), else 0: no division per call.
  SimTime read_ps_per_byte_ = 0;
  std::unique_ptr<cc::SwitchCc> cc_hooks_;
  int base_queues_ = 1;               // per input VL, from the queuing policy
  bool xbar_picks_queues_ = false;    // the mechanism arbitrates among an input's queues (H6)
  bool cc_chooses_vls_ = false;       // the mechanism picks output VLs (SwitchCc::OutputVl)
  uint32_t obuf_class_capacity_ = 0;  // blocks one credit class may hold in an output buffer
  bool cc_checks_heads_ = false;      // the mechanism may move heads (SwitchCc::HeadQueue)
  // From Start: no mechanism picks among an input's queues, no read port per queue, no bypass
  // limit (Servable).
  bool oldest_only_ = false;
  // From Start: no output buffer, and at most one queue of an input requests a given output at
  // any time, so a head may register before its ready time (HeadChanged).
  bool early_register_ = false;
  // Some port enforces partitions (PortInfo:PartitionEnforcementInbound or Outbound): only then
  // does forwarding read the ports' PortMgmt, two cache misses a packet otherwise.
  bool pkey_enforced_ = false;
  mutable std::vector<int> pick_queues_;  // scratch for PickedQueue, kept to avoid allocation
  mutable std::vector<Queue*> pick_ptrs_;
  // Scratch for Arbitrate: per data VL, the inputs whose request can go now and their queues.
  std::vector<uint64_t> servable_mask_;
  std::vector<Queue*> servable_queue_;
};

}  // namespace ibemu::sw
