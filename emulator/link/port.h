// One physical port of a device: the link to its peer, the transmit side's view of the peer's
// credits, and the receive side's buffer accounting, per VL (and credit class).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "common/link/link_rate.h"
#include "emulator/engine/event.h"
#include "emulator/link/credits.h"
#include "emulator/link/slot_array.h"
#include "emulator/stats/binned.h"

namespace ibemu::link {

constexpr int kMaxVls = 16;
// VL15 carries subnet management packets: no credits, and before any data VL (IBA 7.6.9).
constexpr int kVl15 = 15;

struct LinkEnd {
  bool connected = false;
  engine::LpId peer_lp = 0;
  uint16_t peer_port = 0;
  SimTime latency = 0;  // propagation plus PHY
  link::LinkRate rate;
  // The peer handles an arriving packet this long after its head arrives (Device::rx_delay), and
  // credits from an FC packet become usable fc_latency after it arrives. Both lengthen the
  // lookahead between processes; see docs/architecture.md.
  SimTime peer_rx_delay = 0;
  SimTime fc_latency = 0;
};

// Ordered so that each end of a link touches one cache line of counters a packet-hop (for the
// low SLs): the transmitter's packet, byte and per-SL counts with the FC packets it receives,
// and the receiver's with the FC packets it sends and its occupancy bins; what changes rarely
// after them. The FC counts had lines of their own, two cache misses a packet-hop.
struct alignas(64) PortStats {
  uint64_t tx_packets = 0, tx_bytes = 0;
  uint64_t rx_fc_packets = 0;
  std::array<uint64_t, 16> xmit_data_sl{};  // octets per SL, LRH through VCRC
  alignas(64) uint64_t rx_packets = 0;
  uint64_t rx_bytes = 0;
  uint64_t tx_fc_packets = 0;
  std::vector<stats::BinnedIntegral> rx_occupancy;  // blocks, per VL
  std::array<uint64_t, 16> rcv_data_sl{};
  uint64_t credit_violations = 0;  // packets that arrived with no room: a peer bug, never expected
  uint64_t dropped_no_route = 0;
  uint64_t link_downed = 0;  // times the link left LinkUp or retrained (PMA LinkDownedCounter)
  uint64_t xmit_wait = 0;    // PortXmitWait ticks of the runs that have ended (Device::XmitWait)
  std::vector<stats::BinnedIntegral> credit_stalled;  // 1 while a packet waits for credits
  // Packets sent with FECN or BECN set, per VL: where congestion control marked and echoed.
  std::array<uint64_t, 16> tx_fecn{}, tx_becn{};
};

// PortXmitWait accounting: counted up to `mark`; the waiting run open there began at `start`
// (-1: none open).
struct XmitWaitRun {
  SimTime mark = 0;
  SimTime start = -1;
};

// Cache-line aligned, with what a packet-hop reads (the link, the transmit state, the credits of
// each direction in a line of their own) ahead of the counters.
struct alignas(64) Port {
  int number = 0;
  // The port's state as PortInfo shows it (IBA 7.2, 14.2.5.6). PortState: 1 Down, 2 Init,
  // 3 Armed, 4 Active. PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp. Beside `link`, so
  // that link_up (every arbitration asks it) reads one cache line.
  uint8_t port_state = 1;
  uint8_t phys_state = 2;
  LinkEnd link;
  int data_vls = 1;
  int classes = 1;  // credit classes per VL (1 for standard IB)
  SimTime tx_free_at = 0;
  SimTime wake_at = -1;
  uint32_t fc_pending = 0;  // receive slots with an FC packet waiting for the link
  // Bit v: VL v has a packet that only the peer's credits hold back (the credit-stall state the
  // arbiters report; PortXmitWait and the credit-stalled statistic follow it).
  uint32_t credit_stalled_vls = 0;
  SimTime fc_not_before = 0;    // after a retrain: the peer is not up to take FC packets before
  SimTime data_busy_until = 0;  // the last data packet's tail leaves
  // The transmitter's line: the peer's credits as this side knows them, and PortXmitWait.
  alignas(64) SlotArray<TxCredits> tx;  // [vl * classes + class]
  XmitWaitRun xmit_wait_run;            // PortXmitWait accounting (Device::XmitWait)
  // The receiver's line: its buffer accounting.
  alignas(64) SlotArray<RxCredits> rx;
  SlotArray<uint32_t> vl_used;  // receive buffer blocks in use per VL, all credit classes
  PortStats stats;

  int Slot(int vl, int cls) const { return vl * classes + cls; }
};

}  // namespace ibemu::link
