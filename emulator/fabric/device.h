// What switches and HCAs share: the link layer. Sending a packet charges the peer's credits;
// freeing receive buffer space sends a flow-control packet back; FC packets update credits.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "emulator/engine/logical_process.h"
#include "emulator/mgmt/mad_packet.h"
#include "emulator/mgmt/managed_device.h"
#include "emulator/port/port.h"

namespace ibemu::fabric {

using engine::Event;
using engine::Packet;
using link::SimTime;

// Sees every data packet a port puts on its link (captures, traces).
class PacketTap {
 public:
  virtual ~PacketTap() = default;
  virtual void OnTransmit(SimTime t, engine::LpId lp, int port, const Packet& p) = 0;
};

// A program attached to an HCA port through the libibumad library (ibemu up): MADs for QP0/QP1
// that the port's own agents do not answer go to it.
class MadClient {
 public:
  virtual ~MadClient() = default;
  // False when nothing is attached at (lp, port); the MAD is then dropped.
  virtual bool Deliver(engine::LpId lp, int port, const engine::MadBytes& mad,
                       const mgmt::MadAddress& from) = 0;
};

struct StatsConfig {
  SimTime interval = 0;
  int bins = 0;
};

class Device : public engine::LogicalProcess, public mgmt::ManagedDevice {
 public:
  enum LocalKind : uint16_t {
    kFcSend = engine::kFirstLocalKind,  // send the pending FC packet of (port, slot a)
    kWake,                              // re-run transmit arbitration on `port`
    kMadAgent,                          // port, pkt: the agents take a management packet now
    kMadFromClient,                     // port, pkt: an attached program sends a MAD
    kLinkCommand,                       // port, a = 1 enable / 0 disable (ibemu link)
    kFirstDeviceKind,
  };

  Device(engine::LpId id, std::string name, int num_ports);

  const std::string& name() const { return name_; }
  int num_ports() const { return static_cast<int>(ports_.size()) - 1; }
  port::Port& port(int p) { return ports_[p]; }
  const port::Port& port(int p) const { return ports_[p]; }

  // Configuration, before Start().
  void ConnectPort(int p, const port::LinkEnd& l) { ports_[p].link = l; }
  void ConfigureBuffers(int p, int data_vls, int classes, uint32_t class_capacity_blocks);
  void SetTap(PacketTap* t) { tap_ = t; }
  // How long after a packet's head arrives this device first acts on it. A switch cannot route a
  // packet before its routing latency, so its arrivals are delivered that much later, with the
  // buffer accounting dated back to the real arrival: the same behaviour, and a longer lookahead.
  void set_rx_delay(SimTime d) { rx_delay_ = d; }
  SimTime rx_delay() const { return rx_delay_; }
  void SetStats(const StatsConfig& s) { stats_cfg_ = s; }
  void set_mgmt_latency(SimTime t) { mgmt_latency_ = t; }
  void SetMadClient(MadClient* c) { mad_client_ = c; }

  // mgmt::ManagedDevice
  mgmt::NodeMgmt& node_mgmt() override { return node_mgmt_; }
  mgmt::PortMgmt& port_mgmt(int p) override { return port_mgmt_[p]; }
  const mgmt::PortMgmt& port_mgmt(int p) const { return port_mgmt_[p]; }
  int mgmt_num_ports() const override { return num_ports(); }
  bool port_cabled(int p) const override { return ports_[p].link.connected; }
  int data_vls() const override { return ports_.size() > 1 ? ports_[1].data_vls : 1; }
  int64_t mgmt_now_ps() const override { return now(); }
  mgmt::PortCounters CountersNow(int p) const override;
  void RequestPortState(int port, uint8_t port_state, uint8_t phys_state) override;

  // The physical link is up (cabled, both ends enabled), and the port may carry data.
  bool link_up(int p) const { return ports_[p].link.connected && port_mgmt_[p].phys_state == 5; }
  bool port_active(int p) const { return link_up(p) && port_mgmt_[p].port_state == 4; }

  void Start() override;
  void Handle(const Event& e) final;
  // Brings time-weighted statistics up to `end`.
  virtual void FinishStats(SimTime end);

 protected:
  virtual void HandleDevice(const Event& e) = 0;
  // A packet's head arrived on port `p`; the link layer has already charged the buffer.
  virtual void OnPacket(int p, Packet* pkt) = 0;
  // Credits came back on `p` or the link fell idle: try to transmit.
  virtual void Arbitrate(int p) = 0;

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
  // A management packet (the MAD bytes travel in pkt->mad) for this device's agents, handed over
  // mgmt_latency after its tail arrived: the agents' answer time.
  void QueueForAgents(int p, Packet* pkt);
  virtual void OnManagementPacket(int p, Packet* pkt) = 0;
  virtual void OnClientMad(int p, Packet* pkt) { FreePacket(pkt); }
  // The link of `p` came up or went down.
  virtual void OnLinkChanged(int p, bool up) {}
  // Hands a MAD to the program attached at port p; false if there is none.
  bool DeliverToClient(int p, Packet* pkt);

  // Arranges for Arbitrate(p) to run at time t (deduplicated).
  void WakeAt(int p, SimTime t);
  void SetStalled(int p, int vl, bool stalled);

  std::vector<port::Port> ports_;  // index = port number; [0] is the switch's management port
  mgmt::NodeMgmt node_mgmt_;
  std::vector<mgmt::PortMgmt> port_mgmt_;
  SimTime mgmt_latency_ = link::kPsPerUs;
  MadClient* mad_client_ = nullptr;

 private:
  void SendFlowControl(int p, int slot);
  void OnFlowControl(const Event& e);
  void OnPeerLinkState(int p, bool peer_enabled, bool retrain);
  void SetLink(int p, bool up);
  void RestartFlowControl(int p);
  void TellPeer(int p, bool retrain);

  std::vector<uint8_t> peer_enabled_;  // [port]: the other end of the cable is not disabled

  std::string name_;
  PacketTap* tap_ = nullptr;
  SimTime rx_delay_ = 0;
  StatsConfig stats_cfg_;
};

}  // namespace ibemu::fabric
