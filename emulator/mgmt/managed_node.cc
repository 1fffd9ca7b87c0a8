#include "emulator/mgmt/managed_node.h"

#include <algorithm>

namespace ibemu::mgmt {

ManagedNode::ManagedNode(engine::LpId id, std::string name, int num_ports)
    : link::Device(id, std::move(name), num_ports), port_mgmt_(num_ports + 1), cc_(num_ports + 1) {}

void ManagedNode::HandleUpper(const engine::Event& e) {
  switch (e.kind) {
    case kMadAgent:
      OnManagementPacket(e.port, e.pkt);
      return;
    case kMadFromClient:
      OnClientMad(e.port, e.pkt);
      return;
    case kLinkCommand:
      ChangePortState(e.port, 0, e.a ? 2 : 3);  // Polling (enable) or Disabled
      return;
    default:
      HandleDevice(e);
  }
}

PortCounters ManagedNode::CountersNow(int p) const {
  PortCounters c = port_mgmt_[p].counters;
  const link::PortStats& st = ports_[p].stats;
  c.xmit_data = st.tx_bytes;
  c.rcv_data = st.rx_bytes;
  c.xmit_pkts = c.unicast_xmit_pkts = st.tx_packets;
  c.rcv_pkts = c.unicast_rcv_pkts = st.rx_packets;
  c.link_downed = st.link_downed;
  c.xmit_wait = XmitWait(p);
  c.xmit_data_sl = st.xmit_data_sl;
  c.rcv_data_sl = st.rcv_data_sl;
  return c;
}

void ManagedNode::QueueForAgents(int p, engine::Packet* pkt) {
  Post(id(), std::max(now(), pkt->tail_arrival) + mgmt_latency_, kMadAgent,
       static_cast<uint16_t>(p), 0, 0, pkt);
}

bool ManagedNode::DeliverToClient(int p, engine::Packet* pkt) {
  MadAddress a;
  bool ok = mad_client_ && ParseMadPacket(*pkt, &a) && mad_client_->Deliver(id(), p, *pkt->mad, a);
  FreePacket(pkt);
  return ok;
}

}  // namespace ibemu::mgmt
