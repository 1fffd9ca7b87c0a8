#include "emulator/fabric/fabric.h"

#include <algorithm>

#include "emulator/hca/hca.h"
#include "emulator/policy/builtin.h"
#include "emulator/routing/routing_engine.h"
#include "emulator/switch/switch.h"

namespace ibemu::fabric {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

SimTime RxDelay(const scenario::Scenario& s, int n) {
  return s.topo.nodes[n].type == topology::NodeType::kSwitch ? s.sw.latency : 0;
}

SimTime CableLatency(const scenario::Scenario& s, const topology::Cable& c) {
  return link::PropagationDelay(c.length_m) + s.phy_latency;
}

std::unique_ptr<Fabric> BuildFabric(const scenario::Scenario& s, const std::vector<int>& local) {
  policy::RegisterBuiltins();
  const topology::Topology& t = s.topo;
  auto f = std::make_unique<Fabric>();
  f->lids = routing::LidMap::Assign(t);
  f->queuing = policy::InputQueuingRegistry::Get().Make(s.queuing);
  f->ctx.queuing = f->queuing.get();
  f->ctx.dest_index_of_lid.assign(f->lids.owner.size(), -1);
  for (size_t i = 0; i < f->lids.endpoint_lids.size(); ++i)
    f->ctx.dest_index_of_lid[f->lids.endpoint_lids[i]] = static_cast<int32_t>(i);
  f->ctx.num_destinations = static_cast<int>(f->lids.endpoint_lids.size());

  std::vector<std::string> names;
  for (const auto& fi : s.flows) names.push_back(fi.name);
  f->flows.Init(names, s.interval, s.bins());

  std::vector<bool> want(t.nodes.size(), local.empty());
  for (int n : local) want[n] = true;

  routing::RoutingResult routes =
      routing::RoutingRegistry::Get().Make(s.routing)->Route(t, f->lids);

  policy::QueuingContext qc;
  qc.num_destinations = f->ctx.num_destinations;
  qc.vl_capacity_blocks = s.sw.vl_buffer_blocks;
  int classes = f->queuing->NumCreditClasses(qc);

  StatsConfig stats{s.interval, s.bins()};
  f->devices.resize(t.nodes.size());
  for (size_t n = 0; n < t.nodes.size(); ++n) {
    if (!want[n]) continue;
    const topology::Node& node = t.nodes[n];
    engine::LpId id = static_cast<engine::LpId>(n);
    uint32_t vl_blocks;
    if (node.type == topology::NodeType::kSwitch) {
      auto sw = std::make_unique<sw::Switch>(id, node.name, node.num_ports, s.sw, &f->ctx);
      sw->set_lid(f->lids.lid[n][0]);
      auto it = routes.lft.find(static_cast<int>(n));
      if (it != routes.lft.end()) sw->lft() = it->second;
      if (!s.sl2vl.empty())
        for (int in = 0; in <= node.num_ports; ++in)
          for (int out = 0; out <= node.num_ports; ++out)
            for (int sl = 0; sl < 16; ++sl) sw->SetSl2Vl(in, out, sl, s.sl2vl[sl]);
      vl_blocks = s.sw.vl_buffer_blocks;
      f->devices[n] = std::move(sw);
    } else {
      auto h = std::make_unique<hca::Hca>(id, node.name, node.num_ports, s.hca, &f->ctx, &f->flows,
                                          SplitMix(s.seed ^ SplitMix(n)));
      for (int p = 1; p <= node.num_ports; ++p) {
        h->set_lid(p, f->lids.lid[n][p]);
        if (!s.sl2vl.empty())
          for (int sl = 0; sl < 16; ++sl) h->SetSl2Vl(p, sl, s.sl2vl[sl]);
      }
      auto src = s.sources.find(node.name);
      if (src != s.sources.end())
        for (const hca::TrafficSource& ts : src->second) h->AddSource(ts);
      vl_blocks = s.hca.vl_buffer_blocks;
      f->devices[n] = std::move(h);
    }
    Device* d = f->devices[n].get();
    d->SetStats(stats);
    d->set_rx_delay(RxDelay(s, static_cast<int>(n)));
    for (int p = 1; p <= node.num_ports; ++p) {
      d->ConfigureBuffers(p, s.data_vls, classes, vl_blocks);
      const topology::Cable* c = t.CableAt({static_cast<int>(n), p});
      if (!c) continue;
      topology::PortRef peer = t.Peer({static_cast<int>(n), p});
      port::LinkEnd l;
      l.connected = true;
      l.peer_lp = static_cast<engine::LpId>(peer.node);
      l.peer_port = static_cast<uint16_t>(peer.port);
      l.latency = CableLatency(s, *c);
      l.rate = c->rate;
      l.peer_rx_delay = RxDelay(s, peer.node);
      l.fc_latency = s.fc_latency;
      d->ConnectPort(p, l);
    }
  }
  return f;
}

}  // namespace ibemu::fabric
