// libFuzzer target: management datagrams from the wire. Arbitrary bytes become a MAD that
// either an attached program sends from H1 or a switch port receives, in a running test-bed
// fabric; the agents and the directed-route rules must answer, drop or forward without reading
// out of bounds, and the fabric must keep answering a good SMP afterwards.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "common/mad/attribute_table.h"
#include "common/mad/mad_header.h"
#include "common/topology/generators.h"
#include "emulator/engine/partition.h"
#include "emulator/fabric/fabric.h"
#include "tests/fuzz/fuzz_fabric.h"

namespace {

using namespace ibemu;

struct Counter : mgmt::MadClient {
  bool Deliver(engine::LpId, int, const engine::MadBytes&, const mgmt::MadAddress&) override {
    ++got;
    return true;
  }
  int got = 0;
};

struct World : fuzzing::FuzzFabric {
  Counter client;
  uint64_t seq = 0;

  World() {
    for (auto& d : f->devices) d->SetMadClient(&client);
    Start();
  }
  void Inject(int node, int port, uint16_t kind, const uint8_t* mad, bool vl15) {
    engine::Packet* p = part->pool().Get();
    mgmt::MadAddress a;
    a.vl = vl15 ? 15 : 0;
    a.dlid = 0xFFFF;
    mgmt::BuildMadPacket(p, a);
    std::memcpy(p->mad->data(), mad, engine::kMadBytes);
    engine::Event e;
    e.time = part->now();
    e.lp = static_cast<engine::LpId>(node);
    e.src = 0xFFFFFFFE;
    e.seq = seq++;
    e.kind = kind;
    e.port = static_cast<uint16_t>(port);
    e.b = static_cast<uint64_t>(part->now());
    e.pkt = p;
    part->Schedule(e);
    part->RunUntil(part->now() + 20 * link::kPsPerUs);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static World w;
  if (size < 1) return 0;
  uint8_t mad[engine::kMadBytes] = {};
  std::memcpy(mad, data + 1, std::min<size_t>(size - 1, sizeof mad));
  (void)mad::DescribeMad(mad);
  int h1 = w.s.topo.FindNode("H1"), s1 = w.s.topo.FindNode("S1");
  if (data[0] & 1) {
    w.Inject(h1, 1, mgmt::ManagedNode::kMadFromClient, mad, true);
  } else {
    // As if it arrived on a switch port: VL15, or a data VL for the switch's GS agents.
    w.Inject(s1, 1 + (data[0] >> 2) % 36, engine::kPacketArrive, mad, (data[0] & 2) != 0);
  }
  // The fabric still answers a plain NodeInfo to H1's neighbour.
  int before = w.client.got;
  uint8_t ni[engine::kMadBytes] = {1, mad::mgmt_class::kSubnDirected, 1, mad::method::kGet};
  ni[7] = 1;      // hop count
  ni[17] = 0x11;  // NodeInfo
  ni[32] = ni[33] = ni[34] = ni[35] = 0xFF;
  ni[129] = 1;
  w.Inject(h1, 1, mgmt::ManagedNode::kMadFromClient, ni, true);
  if (w.client.got <= before) __builtin_trap();
  return 0;
}
