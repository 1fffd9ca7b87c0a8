// Drives one device alone, for testing each hook without a fabric: the device is LP 0 of a
// partition, and every neighbour is played by the harness (LP 1). What the device sends to its
// links (packets, FC packets, control messages) is recorded; what its neighbours would send
// (packets, credits, control messages) is injected at chosen times.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "emulator/engine/partition.h"
#include "emulator/link/fabric_context.h"
#include "emulator/mgmt/managed_node.h"

namespace ibemu::testing {

class DeviceHarness : public engine::RemoteSink {
 public:
  static constexpr engine::LpId kDevice = 0, kNeighbours = 1;

  // What the device sent to a neighbour: the event as it left, with the packet's header copied.
  struct Sent {
    engine::Event e;
    std::array<uint8_t, engine::kMaxHeaderBytes> hdr{};
    uint32_t payload = 0;
    engine::Packet Header() const {
      engine::Packet p;
      p.hdr = hdr;
      return p;
    }
  };

  DeviceHarness() : part_(2) { part_.SetRemote(this); }

  engine::Partition& partition() { return part_; }

  // Adds the device (its LP id must be kDevice) with ports 1..n cabled to the harness, Active,
  // `data_vls` VLs of `vl_blocks` each.
  void Attach(mgmt::ManagedNode* d, link::LinkRate rate, link::SimTime latency, int data_vls,
              uint32_t vl_blocks) {
    dev_ = d;
    rate_ = rate;
    for (int p = 1; p <= d->num_ports(); ++p) {
      link::LinkEnd l;
      l.connected = true;
      l.peer_lp = kNeighbours;
      l.peer_port = static_cast<uint16_t>(p);
      l.latency = latency;
      l.rate = rate;
      d->ConnectPort(p, l);
      d->ConfigureBuffers(p, data_vls, 1, vl_blocks);
      d->port(p).phys_state = 5;
      d->port(p).port_state = 4;
    }
    part_.Add(d);
  }
  void Start() { part_.StartAll(); }
  void RunUntil(link::SimTime t) { part_.RunUntil(t); }

  // The neighbour on `port` advertises credit limit `fccl` (blocks) for `vl` at time t.
  void Credits(int port, int vl, uint16_t fccl, link::SimTime t) {
    engine::Event e = Event(t, engine::kFlowControlArrive, port);
    e.a = static_cast<uint32_t>(vl);
    e.b = uint64_t{fccl} << 32;  // FCTBS 0: the neighbour has received nothing from us
    part_.Inject(e);
  }
  // `p`'s head arrives on `port` at time t (plus the device's receive delay), its tail one
  // serialisation later. The packet comes from the partition's pool (NewPacket).
  void Arrive(int port, engine::Packet* p, link::SimTime t) {
    engine::Event e = Event(t + dev_->rx_delay(), engine::kPacketArrive, port);
    e.b = static_cast<uint64_t>(t + rate_.SerializationTime(p->wire_bytes()));
    e.pkt = p;
    part_.Inject(e);
  }
  void Control(int port, uint32_t a, uint64_t b, link::SimTime t) {
    engine::Event e = Event(t, engine::kControlArrive, port);
    e.a = a;
    e.b = b;
    part_.Inject(e);
  }
  engine::Packet* NewPacket() { return part_.pool().Get(); }

  // engine::RemoteSink
  void Send(const engine::Event& e) override {
    Sent s;
    s.e = e;
    if (e.pkt) {
      s.hdr = e.pkt->hdr;
      s.payload = e.pkt->payload_len;
      s.e.pkt = nullptr;
    }
    sent.push_back(s);
  }

  // The packets the device put on `port`'s link, in order.
  std::vector<Sent> PacketsOn(int port) const {
    std::vector<Sent> v;
    for (const Sent& s : sent)
      if (s.e.kind == engine::kPacketArrive && s.e.port == port) v.push_back(s);
    return v;
  }

  std::vector<Sent> sent;

 private:
  engine::Event Event(link::SimTime t, uint16_t kind, int port) {
    engine::Event e;
    e.time = t;
    e.lp = kDevice;
    e.src = kNeighbours;
    e.seq = seq_++;
    e.kind = kind;
    e.port = static_cast<uint16_t>(port);
    return e;
  }

  engine::Partition part_;
  mgmt::ManagedNode* dev_ = nullptr;
  link::LinkRate rate_;
  uint64_t seq_ = 0;
};

}  // namespace ibemu::testing
