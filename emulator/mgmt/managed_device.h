// What the management agents need from a device: its management state and the data-plane tables
// an SMP may read or write. Switches and HCAs implement it; the agents (sma.cc, pma.cc) see only
// this, so they are the same code for both and can be tested without a fabric.
#pragma once
#include <cstdint>

#include "emulator/mgmt/cc_state.h"
#include "emulator/mgmt/port_mgmt.h"

namespace ibemu::mgmt {

class ManagedDevice {
 public:
  virtual ~ManagedDevice() = default;

  virtual NodeMgmt& node_mgmt() = 0;
  // The Congestion Control Agent's state behind port p: a switch has one for all its ports.
  virtual CcState& cc_state(int p) = 0;
  virtual PortMgmt& port_mgmt(int p) = 0;  // switches: 0 is the management port
  virtual int mgmt_num_ports() const = 0;  // physical ports
  virtual bool is_switch() const = 0;
  virtual bool port_cabled(int p) const = 0;
  // PortInfo:PortState and PortPhysicalState, which the link layer keeps.
  virtual uint8_t port_state(int p) const = 0;
  virtual uint8_t phys_state(int p) const = 0;
  virtual int data_vls() const = 0;
  virtual int64_t mgmt_now_ps() const = 0;
  // Port p's counters as they stand: port_mgmt(p).counters with what the link layer counts (data
  // totals, per-SL octets, LinkDowned) filled in.
  virtual PortCounters CountersNow(int p) const = 0;

  // Switch tables (never called on a CA).
  virtual uint8_t LftEntry(uint32_t lid) const { return 0xFF; }
  virtual void SetLftEntry(uint32_t lid, uint8_t port) {}
  virtual int Sl2VlEntry(int in, int out, int sl) const = 0;  // CA: in = out = the port
  virtual void SetSl2VlEntry(int in, int out, int sl, int vl) = 0;

  // The VLArbitrationTable or VLHighLimit of `port` changed: rebuild its arbiter.
  virtual void VlArbChanged(int port) = 0;
  // A PortInfo Set wrote the link fields of physical port `port` (PortMgmt: widths, speeds, VLs,
  // partition enforcement, ...); not called for a switch's port 0, which has none.
  virtual void PortInfoChanged(int port) {}
  // An SMP asked for a new PortState or PortPhysicalState (0 = leave as is). The device applies
  // it to the link (a disabled port takes its peer down).
  virtual void RequestPortState(int port, uint8_t port_state, uint8_t phys_state) = 0;
};

}  // namespace ibemu::mgmt
