// A device with management agents: a link::Device whose ports carry PortInfo and counters, whose
// management packets go to its agents (SMA, PMA) after their answer time, and whose MADs for an
// attached program (libibumad through `ibemu up`) go out through a MadClient. Switches and HCAs
// are ManagedNodes; the link layer below knows nothing of management.
#pragma once
#include <string>
#include <vector>

#include "emulator/link/device.h"
#include "emulator/mgmt/mad_packet.h"
#include "emulator/mgmt/managed_device.h"

namespace ibemu::mgmt {

// A program attached to an HCA port through the libibumad library (ibemu up): MADs for QP0/QP1
// that the port's own agents do not answer go to it.
class MadClient {
 public:
  virtual ~MadClient() = default;
  // False when nothing is attached at (lp, port); the MAD is then dropped.
  virtual bool Deliver(engine::LpId lp, int port, const engine::MadBytes& mad,
                       const MadAddress& from) = 0;
};

class ManagedNode : public link::Device, public ManagedDevice {
 public:
  enum LocalKind : uint16_t {
    kMadAgent = link::Device::kFirstUpperKind,  // port, pkt: the agents take a management packet
    kMadFromClient,                             // port, pkt: an attached program sends a MAD
    kLinkCommand,                               // port, a = 1 enable / 0 disable (ibemu link)
    kFirstDeviceKind,
  };

  ManagedNode(engine::LpId id, std::string name, int num_ports);

  void set_mgmt_latency(link::SimTime t) { mgmt_latency_ = t; }
  void SetMadClient(MadClient* c) { mad_client_ = c; }

  // ManagedDevice
  NodeMgmt& node_mgmt() override { return node_mgmt_; }
  CcState& cc_state(int p) override { return cc_[is_switch() ? 0 : p]; }
  PortMgmt& port_mgmt(int p) override { return port_mgmt_[p]; }
  const PortMgmt& port_mgmt(int p) const { return port_mgmt_[p]; }
  int mgmt_num_ports() const override { return num_ports(); }
  bool port_cabled(int p) const override { return ports_[p].link.connected; }
  uint8_t port_state(int p) const override { return ports_[p].port_state; }
  uint8_t phys_state(int p) const override { return ports_[p].phys_state; }
  int data_vls() const override { return ports_.size() > 1 ? ports_[1].data_vls : 1; }
  int64_t mgmt_now_ps() const override { return now(); }
  PortCounters CountersNow(int p) const override;
  void RequestPortState(int p, uint8_t port_state, uint8_t phys_state) override {
    ChangePortState(p, port_state, phys_state);
  }

 protected:
  // Events of the device itself (kinds from kFirstDeviceKind).
  virtual void HandleDevice(const engine::Event& e) = 0;
  // A management packet (the MAD bytes travel in pkt->mad) for this device's agents, handed over
  // mgmt_latency after its tail arrived: the agents' answer time.
  void QueueForAgents(int p, engine::Packet* pkt);
  virtual void OnManagementPacket(int p, engine::Packet* pkt) = 0;
  virtual void OnClientMad(int p, engine::Packet* pkt) { FreePacket(pkt); }
  // Hands a MAD to the program attached at port p; false if there is none.
  bool DeliverToClient(int p, engine::Packet* pkt);

  NodeMgmt node_mgmt_;
  std::vector<PortMgmt> port_mgmt_;
  std::vector<CcState> cc_;  // [port] on a CA; a switch keeps one, [0], for all its ports
  link::SimTime mgmt_latency_ = link::kPsPerUs;
  MadClient* mad_client_ = nullptr;

 private:
  void HandleUpper(const engine::Event& e) final;
};

}  // namespace ibemu::mgmt
