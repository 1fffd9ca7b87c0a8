// The channel adapter's congestion-control hooks (docs/architecture.md §9): what a mechanism
// sees of an HCA (HcaView, implemented by the HCA) and what it is told (HcaCc, one stateful
// instance per HCA). Throttling goes through one gate per QP and one per (port, SL): a QP sends
// no earlier than the later of the two, and throttling one QP never blocks another.
#pragma once
#include <cstdint>

#include "emulator/engine/packet.h"
#include "emulator/mgmt/cc_state.h"

namespace ibemu::cc {

using engine::Packet;
using SimTime = engine::SimTime;

// A gate set to this stays closed until the mechanism sets it again (a window waiting for its
// acknowledgement).
constexpr SimTime kGateClosed = INT64_MAX;

class HcaView {
 public:
  virtual ~HcaView() = default;
  virtual SimTime Now() const = 0;
  virtual int NumPorts() const = 0;
  // The port's Congestion Control Agent state (CACongestionSetting, the CCT, logs).
  virtual mgmt::CcState& Cca(int port) = 0;
  // QPs are numbered 0.. in creation order; each sends on one port and SL.
  virtual uint32_t NumQps() const = 0;
  virtual int QpPort(uint32_t qp) const = 0;
  virtual int QpSl(uint32_t qp) const = 0;
  virtual uint32_t QpNumber(uint32_t qp) const = 0;  // the QPN on the wire
  virtual uint16_t QpRemoteLid(uint32_t qp) const = 0;
  // The port's link time for `bytes` on the wire, and the path MTU (payload bytes).
  virtual SimTime SerializationTime(int port, uint32_t bytes) const = 0;
  virtual uint32_t Mtu() const = 0;
  // The QP may send its next packet at t or later (its own gate), or every QP of (port, sl).
  virtual void SetQpGate(uint32_t qp, SimTime t) = 0;
  virtual void SetSlGate(int port, int sl, SimTime t) = 0;
  virtual SimTime QpGate(uint32_t qp) const = 0;
  virtual SimTime SlGate(int port, int sl) const = 0;
  // Calls HcaCc::OnTimer(a, b) at time t (>= Now()).
  virtual void PostTimer(SimTime t, uint32_t a, uint64_t b) = 0;
  // Sends (a, b) to the device at the other end of `port` (Device::SendControl).
  virtual void SendControl(int port, uint32_t a, uint64_t b) = 0;
  // H7: sends (a, b) to the side band (SideBandCc::OnReport); nothing if there is none.
  virtual void Report(uint32_t a, uint64_t b) = 0;
  // The channel adapters' ports in the fabric (the end nodes), the port's LID, its SL2VL table,
  // and its data VLs.
  virtual int NumEndNodes() const = 0;
  virtual uint16_t Lid(int port) const = 0;
  virtual int Sl2Vl(int port, int sl) const = 0;
  virtual int DataVls(int port) const = 0;
  // Sends a 256-byte GS MAD from QP1 of `port` to QP1 of `dlid` on (sl, vl), ahead of data on
  // that VL like every GMP: a real packet taking link bandwidth and credits, for notifications
  // between channel adapters (DDBBM's). The destination's mechanism gets it in OnMad.
  virtual void SendMad(int port, uint16_t dlid, int sl, int vl, const uint8_t* mad) = 0;
};

// How a message travels, latched for all its packets (MessageRoute).
struct MessageRoute {
  uint8_t sl;          // the SL in its headers
  uint8_t vl;          // the VL it is sent on at the source
  uint8_t resv6a = 0;  // BTH Resv6a bits each of its packets carries
};

// What the destination does about a data packet's congestion marking.
enum class Echo : uint8_t {
  kNone,
  kOnAck,  // BECN on the acknowledgement the packet asks for
  kCnp,    // a congestion notification packet to the source QP, ahead of other traffic
};

class HcaCc {
 public:
  virtual ~HcaCc() = default;
  // H3: a data packet for this HCA arrived on `port` (its head; the host has not taken it yet).
  virtual Echo OnReceive(HcaView& h, int port, Packet& p) { return Echo::kNone; }
  // H4: an acknowledgement or CNP for local QP `qp` arrived (the mechanism reads BECN itself).
  virtual void OnResponse(HcaView& h, uint32_t qp, Packet& p) {}
  // H3: the acknowledgement `ack` of data packet `data` has been built (BECN already set when
  // OnReceive answered kOnAck): the mechanism may echo more of the data's marks in it.
  virtual void OnAck(HcaView& h, Packet& data, Packet& ack) {}
  // H4: a message was queued at synthetic QP `qp`; `was_idle`: the QP had nothing else to send.
  virtual void OnMessageQueued(HcaView& h, uint32_t qp, bool was_idle) {}
  // H4: the front message of synthetic QP `qp` is about to be segmented: `m` holds the path's SL
  // and its VL from the port's SL2VL table. The mechanism may pick another SL (an SL per queue,
  // DDBBM's IB form; set the VL to match), a VL directly (a queue chosen from the header, DDBBM's
  // paper form), and header bits. Asked when a message reaches the front of its QP, so a message
  // keeps one route for all its packets and packets of one message are never reordered.
  virtual void RouteMessage(HcaView& h, uint32_t qp, MessageRoute& m) {}
  // H4: QP `qp` has just put data packet `p` on the link.
  virtual void OnSent(HcaView& h, uint32_t qp, const Packet& p) {}
  virtual void OnTimer(HcaView& h, uint32_t a, uint64_t b) {}
  // A GS MAD for QP1 of `port` from `slid`, before the node's agents and an attached program see
  // it: true if the mechanism took it (it is then consumed).
  virtual bool OnMad(HcaView& h, int port, uint16_t slid, const uint8_t* mad) { return false; }
  // A control message from the switch at the other end of `port` (SwitchView::SendControl).
  virtual void OnControl(HcaView& h, int port, uint32_t a, uint64_t b) {}
  // H7: a side-band broadcast (SideBandView::Broadcast).
  virtual void OnSignal(HcaView& h, uint32_t a, uint64_t b) {}
  // Whether every RC request packet asks for an acknowledgement (AckReq), not only the last of
  // a message: for sources whose window or rate is clocked by one ACK per packet (Santos, MVCM).
  // Asked for every packet.
  virtual bool AckEachPacket() const { return false; }
  // For results: how hard QP `qp` is throttled now (IB CC: its CCTI), or -1 if the mechanism
  // keeps no such level.
  virtual int Throttle(HcaView& h, uint32_t qp) { return -1; }
};

}  // namespace ibemu::cc
