// The switch as a device: its blocks built from the configuration, the events dispatched to them,
// and what a link changing state does to them. The blocks are input_buffer.cc, forwarding.cc,
// crossbar.cc and switch_management.cc (docs/blocks/); the output port with its credits is the
// link layer's (emulator/link), and output marking the CC mechanism's (emulator/cc).

#include "emulator/switch/switch.h"

#include <algorithm>

#include "emulator/policy/port_mask.h"

namespace ibemu::sw {

Switch::Switch(engine::LpId id, std::string name, int num_ports, const SwitchConfig& cfg,
               const link::FabricContext* ctx)
    : ManagedNode(id, std::move(name), num_ports), cfg_(cfg), ctx_(ctx) {
  int n = num_ports + 1;
  // One Congestion Control Agent answers for every port, with a setting per port (0..N).
  cc_.resize(1);
  cc_[0].ports.resize(static_cast<size_t>(n));
  sl2vl_.assign(static_cast<size_t>(n) * n * 16, 0);
  // Default SL2VL: SL modulo the data VLs, the usual map on a port with fewer VLs than SLs.
  for (int sl = 0; sl < 16; ++sl) sl2vl_common_[sl] = static_cast<uint8_t>(sl % cfg_.data_vls);
  for (int in = 0; in < n; ++in)
    for (int out = 0; out < n; ++out)
      for (int sl = 0; sl < 16; ++sl) SetSl2Vl(in, out, sl, sl2vl_common_[sl]);

  policy::QueuingContext qc;
  qc.num_ports = num_ports;
  qc.num_destinations = ctx_->num_destinations;
  qc.vl_capacity_blocks = cfg_.vl_buffer_blocks;
  base_queues_ = ctx_->queuing->NumQueues(qc);
  inputs_.resize(n);
  read_free_at_.assign(n, 0);
  outputs_.resize(n);
  vl15_.resize(n);
  MakeQueues(base_queues_);
  size_t words = (static_cast<size_t>(n) + 63) / 64;
  mask_words_ = words;
  size_t vl_rows = static_cast<size_t>(n) * cfg_.data_vls;
  req_.assign(vl_rows * n, {});
  req_mask_.assign(vl_rows * words, 0);
  queued_from_.assign(vl_rows * n, 0);
  arriving_from_.assign(static_cast<size_t>(n) * words, 0);
  req_to_.assign(static_cast<size_t>(n) * n, 0);
  req_to_mask_.assign(static_cast<size_t>(n) * words, 0);
  for (int p = 0; p < n; ++p) {
    Input& in = inputs_[p];
    in.bypassed.assign(cfg_.data_vls, 0);
    Output& out = outputs_[p];
    policy::VlArbConfig vc = cfg_.vlarb_config;
    vc.data_vls = cfg_.data_vls;
    SetVlArbiter(p, policy::VlArbiterRegistry::Get().Make(cfg_.vlarb, vc));
    out.xbar = policy::InputArbiterRegistry::Get().Make(cfg_.xbar, n);
    // With credit classes (VOQnet), a queue and a share of the room per class.
    size_t slots = static_cast<size_t>(cfg_.data_vls * ctx_->credit_classes);
    out.obuf.resize(slots);
    if (ctx_->credit_classes > 1) {
      out.obuf_class_blocks.assign(slots, 0);
      out.next_class.assign(static_cast<size_t>(cfg_.data_vls), 0);
    }
  }
  obuf_class_capacity_ = ctx_->credit_classes == 1
                             ? cfg_.output_buffer_blocks
                             : ctx_->queuing->ClassCapacity(cfg_.output_buffer_blocks, num_ports);
}

void Switch::MakeQueues(int nq) {
  queues_per_vl_ = nq;
  queues_.assign(inputs_.size() * cfg_.data_vls * static_cast<size_t>(nq), Queue{});
  for (int p = 0; p < static_cast<int>(inputs_.size()); ++p)
    for (int v = 0; v < cfg_.data_vls; ++v)
      for (int q = 0; q < nq; ++q) {
        Queue& x = QueueAt(p, v, q);
        x.in = static_cast<uint16_t>(p);
        x.vl = static_cast<uint8_t>(v);
        x.index = static_cast<uint32_t>(q);
      }
}

void Switch::SetCc(std::unique_ptr<cc::SwitchCc> c) {
  cc_hooks_ = std::move(c);
  int nq = cc_hooks_ ? cc_hooks_->NumQueues(base_queues_) : base_queues_;
  if (nq != queues_per_vl_) MakeQueues(nq);
  xbar_picks_queues_ = cc_hooks_ && cc_hooks_->ArbitratesQueues();
  cc_chooses_vls_ = cc_hooks_ && cc_hooks_->ChoosesVls();
  cc_checks_heads_ = cc_hooks_ && cc_hooks_->ChecksHeads();
}

void Switch::Start() {
  bool first = true;
  for (int p = 1; p <= num_ports(); ++p) {
    const link::LinkEnd& l = ports_[p].link;
    if (l.connected && (first || l.rate.data_bps() > xbar_rate_.data_bps())) xbar_rate_ = l.rate;
    first = first && !l.connected;
  }
  int64_t p = xbar_rate_.ps_per_byte() * 1000;
  bool whole = p != 0 && cfg_.speedup_milli > 0 && p % cfg_.speedup_milli == 0;
  read_ps_per_byte_ = whole ? p / cfg_.speedup_milli : 0;
  oldest_only_ = !xbar_picks_queues_ && !cfg_.read_port_per_queue && cfg_.bypass_limit == 0;
  // One queue of an input can request an output at a time: one VL, and one queue, or a queue per
  // output port that no mechanism adds to.
  size_t nq = static_cast<size_t>(queues_per_vl_);
  early_register_ =
      !Cioq() && cfg_.data_vls == 1 && oldest_only_ && !cc_checks_heads_ &&
      (nq == 1 || (ctx_->queuing->QueuePerOutput() && nq == static_cast<size_t>(base_queues_)));
  Device::Start();
}

void Switch::HandleDevice(const engine::Event& e) {
  switch (e.kind) {
    case kHeadReady: {
      Queue& q = QueueAt(e.port, static_cast<int>(e.a), static_cast<int>(e.b));
      if (!q.q.empty() && !q.registered && q.q.head->ready_at <= now()) HeadChanged(&q);
      return;
    }
    case kCcTimer:
      if (cc_hooks_) cc_hooks_->OnTimer(*this, e.a, e.b);
      return;
    case engine::kSideBandArrive:
      if (cc_hooks_) cc_hooks_->OnSignal(*this, e.a, e.b);
      return;
    case kInputRelease:
      InputReleased(e.port, static_cast<int>(e.a & 0xFF), static_cast<int>(e.a >> 8),
                    static_cast<uint32_t>(e.b));
      return;
    case kInputReleaseAndWake:
      InputReleased(e.port, static_cast<int>(e.a & 0xFF), static_cast<int>(e.a >> 8),
                    static_cast<uint32_t>(e.b));
      Woken(static_cast<int>(e.b >> 32), e.time);
      return;
    case kOutputRelease: {
      // a: the buffer's slot, VL * classes + class (the VL without classes).
      Output& o = outputs_[e.port];
      int classes = ports_[e.port].classes;
      o.per_vl[e.a / classes].obuf_blocks -= static_cast<uint32_t>(e.b);
      if (classes > 1) o.obuf_class_blocks[e.a] -= static_cast<uint32_t>(e.b);
    }
      Arbitrate(e.port);
      return;
  }
}

void Switch::InputReleased(int in, int vl, int cls, uint32_t blocks) {
  Release(in, vl, cls, blocks);
  // The input is free again: let the outputs it requests look, starting at a rotating position
  // so no output is favoured.
  Input& input = inputs_[in];
  int n = num_ports() + 1;
  int start = input.next_poke;
  if (++input.next_poke == n) input.next_poke = 0;
  // The requested outputs from `start` up, then below it. The mask is read afresh at each step:
  // an output's arbitration can add or take requests of this input.
  auto next_requested = [&](int from) {
    return std::min(n, policy::NextPort(ReqToMask(in), mask_words_, from));
  };
  for (int out = next_requested(start); out < n; out = next_requested(out + 1))
    if (OutputFree(out)) Arbitrate(out);
  for (int out = next_requested(0); out < start; out = next_requested(out + 1))
    if (OutputFree(out)) Arbitrate(out);
}

void Switch::OnLinkChanged(int p, bool up) {
  // IBA 14.2.5.4: a port state change sets PortStateChange and traps to the SM (trap 128).
  node_mgmt_.sw.port_state_change = true;
  SendTrap128();
  if (up)
    Arbitrate(p);
  else
    DiscardQueuedFor(p);
}

}  // namespace ibemu::sw
