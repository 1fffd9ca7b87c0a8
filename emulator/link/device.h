// What switches and HCAs share: the link layer. Sending a packet charges the peer's credits;
// freeing receive buffer space sends a flow-control packet back; FC packets update credits; the
// port's PortState and PortPhysicalState follow the link (IBA 7.2) and the subnet manager.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "emulator/engine/logical_process.h"
#include "emulator/link/fabric_context.h"
#include "emulator/link/port.h"

namespace ibemu::link {

using engine::Event;
using engine::Packet;

// Sees every data packet a port puts on its link (captures, traces).
class PacketTap {
 public:
  virtual ~PacketTap() = default;
  virtual void OnTransmit(SimTime t, engine::LpId lp, int port, const Packet& p) = 0;
};

struct StatsConfig {
  SimTime interval = 0;
  int bins = 0;
};

class Device : public engine::LogicalProcess {
 public:
  enum LocalKind : uint16_t {
    kFcSend = engine::kFirstLocalKind,  // send the pending FC packet of (port, slot a)
    kWake,                              // re-run transmit arbitration on `port`
    kFirstUpperKind,                    // kinds of the layers above (management, the device)
  };

  Device(engine::LpId id, std::string name, int num_ports);

  const std::string& name() const { return name_; }
  int num_ports() const { return static_cast<int>(ports_.size()) - 1; }
  Port& port(int p) { return ports_[p]; }
  const Port& port(int p) const { return ports_[p]; }

  // Configuration, before Start().
  void ConnectPort(int p, const LinkEnd& l) { ports_[p].link = l; }
  void ConfigureBuffers(int p, int data_vls, int classes, uint32_t class_capacity_blocks);
  void SetTap(PacketTap* t) { tap_ = t; }
  // How long after a packet's head arrives this device first acts on it. A switch cannot route a
  // packet before its routing latency, so its arrivals are delivered that much later, with the
  // buffer accounting dated back to the real arrival: the same behaviour, and a longer lookahead.
  void set_rx_delay(SimTime d) { rx_delay_ = d; }
  SimTime rx_delay() const { return rx_delay_; }
  void SetStats(const StatsConfig& s) { stats_cfg_ = s; }

  // The physical link is up (cabled, both ends enabled), and the port may carry data.
  bool link_up(int p) const { return ports_[p].link.connected && ports_[p].phys_state == 5; }
  bool port_active(int p) const { return link_up(p) && ports_[p].port_state == 4; }
  // Applies a requested PortState or PortPhysicalState (0 = leave as is), as an SMP or `ibemu
  // link` asks: a disabled port takes its peer down, Polling trains it again, Down retrains it.
  void ChangePortState(int p, uint8_t port_state, uint8_t phys_state);
  // With the builtin subnet manager nothing would take a port that trains again from Init to
  // Active, so the port comes up Active, as the SM left it at load.
  void set_active_on_link_up(bool on) { active_on_link_up_ = on; }

  // PortXmitWait of port p now (IBA 16.1.3.5): the ticks in which the port had data to transmit
  // and sent none. Here that is a data VL whose head packet waits for credits while no data
  // packet is on the link. A tick is kXmitWaitTickSymbols symbol times (one byte on one lane) of
  // the port's link, counted on a grid from time 0: a tick counts when no data left during all
  // of it.
  uint64_t XmitWait(int p) const;
  // PortSamplesControl:Tick + 1. NVIDIA's switches report Tick 7; the spec leaves it open.
  static constexpr int kXmitWaitTickSymbols = 8;
  // The rule before stop 39 of issue 13, a wake-up after every VL15 packet (WakeAfterVl15): the
  // reference that the rule in use is tested against. Process-wide; tests only.
  static void set_unconditional_vl15_wake(bool on) { unconditional_vl15_wake_ = on; }
  // What became of the wake-ups after VL15 packets that WakeAfterVl15 held back.
  struct HeldWakeCounts {
    uint64_t dropped = 0;             // never posted: the events this device handled fewer
    uint64_t posted_when_asked = 0;   // the port's wake-ups were asked about before they were due
    uint64_t posted_after_event = 0;  // an event gave the port something they could act on
  };
  const HeldWakeCounts& held_wake_counts() const { return held_counts_; }

  void Start() override;
  void Handle(const Event& e) final;
  // Brings time-weighted statistics up to `end`, the end of the run's results, and drops the
  // wake-ups still held back that were due before the clock.
  virtual void FinishStats(SimTime end);

 protected:
  // Events of the layers above the link (kinds from kFirstUpperKind).
  virtual void HandleUpper(const Event& e) = 0;
  // A packet's head arrived on port `p`; the link layer has already charged the buffer.
  virtual void OnPacket(int p, Packet* pkt) = 0;
  // Credits came back on `p` or the link fell idle: try to transmit.
  virtual void Arbitrate(int p) = 0;
  // Whether anything waits to go out on port p (besides FC packets): when not, the port needs
  // no look when its link frees, since what comes to it later calls Arbitrate itself.
  virtual bool HasWaiting(int p) const { return true; }
  // The link of `p` came up or went down (or retrained: `up` with the port back in Init).
  virtual void OnLinkChanged(int p, bool up) {}

  // Puts `pkt` on the link of port `p` now. Its head leaves now; its tail leaves at
  // max(now + serialisation, tail_ready). Returns when the link is free again.
  SimTime Transmit(int p, Packet* pkt, int vl, int cls, SimTime tail_ready);
  // Frees `blocks` of port p's receive buffer on (vl, cls) and returns credits to the peer.
  void Release(int p, int vl, int cls, uint32_t blocks);
  // At a packet boundary a waiting FC packet goes before the next data packet, or a port that
  // always has data to send would never return credits (IBA 7.9.4 sends FC packets between data
  // packets). Sends one if any is pending and the link is free; returns whether it did (the
  // port is then woken when the FC packet has gone).
  bool SendPendingFlowControl(int p);

  // Sends a control message (a, b) to the peer of port p, out of band: it takes no link
  // bandwidth and no credits, and the peer acts on it when it would act on a packet's head sent
  // now (cable latency plus its receive delay), which keeps it within the lookahead between
  // processes. Nothing is sent on a link that is down.
  void SendControl(int p, uint32_t a, uint64_t b);
  // Sends (a, b) to the side band of `ctx` (H7), one side-band latency from now; nothing if the
  // fabric has none.
  void SendSideBand(const FabricContext& ctx, uint32_t a, uint64_t b);
  // A control message from the peer of port p (Device::SendControl on its side).
  virtual void OnControl(int p, uint32_t a, uint64_t b) {}

  // Arranges for Arbitrate(p) to run at time t (deduplicated).
  void WakeAt(int p, SimTime t);
  // Whether a wake already due serves one at t: WakeAt(p, t) would post nothing.
  bool WakeCovered(int p, SimTime t) {
    SettleReservedWake(p);
    const Port& pt = ports_[p];
    return pt.wake_at >= now() && pt.wake_at <= t;
  }
  // What a kWake for port p at time t does; a device that carries the wake in an event of its
  // own (one that does two things at one instant) calls it there, having set wake_at to t.
  void Woken(int p, SimTime t) {
    SettleReservedWake(p);
    if (ports_[p].wake_at == t) ports_[p].wake_at = -1;
    Arbitrate(p);
  }
  // After a VL15 packet (an SMP) that leaves port p at `end`: the wake-up at `end` that finds
  // nothing to do is not posted, as after an FC packet, but exactly (docs/architecture.md,
  // "Transmit wake-ups"). When nothing waits, its sequence number is reserved and it is posted
  // with that number as soon as the port's wake-up is asked about or anything it could act on
  // appears before it is due; otherwise it is dropped, and folded into the digest where it
  // would have run.
  void WakeAfterVl15(int p, SimTime end);
  // Inline: arbitration calls it for every requested VL at every look, and it rarely changes.
  void SetStalled(int p, int vl, bool stalled) {
    if ((ports_[p].credit_stalled_vls >> vl & 1) != static_cast<uint32_t>(stalled))
      ChangeStalled(p, vl, stalled);
  }

  std::vector<Port> ports_;  // index = port number; [0] is the switch's management port

 private:
  // A wake-up held back by WakeAfterVl15: what the kWake would have been.
  struct ReservedWake {
    int port;
    SimTime at;
    uint64_t seq;
  };
  // Posts port p's held-back wake-up, if it has one, before its wake-up state is read or
  // changed. Within an event it is still due (BeforeEvent dropped those that were not); between
  // events, one already past is dropped instead, with every other held back before the clock.
  void SettleReservedWake(int p) {
    if (held_wakes_ != 0) [[unlikely]]
      PostReservedWake(p, false);
  }
  void PostReservedWake(int p, bool after_event);
  // Before an event: drops the held-back wake-ups that would have run before it, folding each
  // into the digest where it would have been handled. Each was checked at the end of the
  // device's last event to find nothing, and nothing that could give it something happened
  // since (between events only verbs calls act on an HCA, and they take work away).
  void BeforeEvent(const Event& e) override;
  template <typename Pred>
  void DropWakes(Pred ran);
  // After an event: posts the held-back wake-ups whose port now has something the wake-up could
  // act on, or whose link changed.
  void AfterEvent() override;
  void HeldWakesChanged() {
    held_wakes_ = static_cast<uint32_t>(reserved_wakes_.size());
    set_event_hooks(held_wakes_ != 0);
  }
  void SendFlowControl(int p, int slot);
  void ChangeStalled(int p, int vl, bool stalled);
  void OnFlowControl(const Event& e);
  void OnPeerLinkState(int p, bool peer_enabled, bool retrain);
  void SetLink(int p, bool up);
  void RestartFlowControl(int p);
  void TellPeer(int p, bool retrain);
  // Closes or opens PortXmitWait runs up to now; called before the stall state or the link's
  // data-busy time changes, so that both were constant since the last call.
  void AccountXmitWait(Port& pt);

  // In the cache line of ports_, which every event reads: what the packet path reads of the
  // device, and whether any wake-up is held back (reserved_wakes_.size()), asked at every event.
  PacketTap* tap_ = nullptr;
  SimTime rx_delay_ = 0;
  uint32_t held_wakes_ = 0;
  bool active_on_link_up_ = false;
  std::vector<uint8_t> peer_enabled_;  // [port]: the other end of the cable is not disabled

  std::vector<ReservedWake> reserved_wakes_;  // rarely more than one
  HeldWakeCounts held_counts_;
  static inline bool unconditional_vl15_wake_ = false;

  std::string name_;
  StatsConfig stats_cfg_;
};

}  // namespace ibemu::link
