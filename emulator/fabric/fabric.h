// Builds the devices of a scenario: one LP per topology node (LP id = node index), links from
// cables, LIDs, LFTs from the routing engine, SL2VL and buffers. Every process computes the same
// LIDs and routes from the same scenario and builds only its own devices, so partitions agree on
// ids, LIDs and routes without talking.
#pragma once
#include <memory>
#include <vector>

#include "common/routing/lid_map.h"
#include "emulator/cc/mechanism.h"
#include "emulator/cc/side_band_lp.h"
#include "emulator/link/fabric_context.h"
#include "emulator/mgmt/managed_node.h"
#include "emulator/policy/input_queuing.h"
#include "emulator/scenario/scenario.h"
#include "emulator/stats/flow_stats.h"

namespace ibemu::fabric {

// The builders and runners assemble link-layer devices; these names are theirs as much.
using engine::Packet;
using link::FabricContext;
using link::PacketTap;
using link::SimTime;
using link::StatsConfig;

struct Fabric {
  FabricContext ctx;
  std::unique_ptr<policy::InputQueuing> queuing;
  std::unique_ptr<cc::Mechanism> cc;
  routing::LidMap lids;
  std::vector<std::unique_ptr<mgmt::ManagedNode>> devices;  // [node index], null if not built here
  // H7: the mechanism's side band, LP id = number of nodes; null if there is none or it is held
  // by another process.
  std::unique_ptr<cc::SideBandLp> side_band;
  stats::FlowTable flows;

  // Every LP built here, in LP id order: the devices, then the side band.
  std::vector<engine::LogicalProcess*> Lps() const {
    std::vector<engine::LogicalProcess*> v;
    for (const auto& d : devices)
      if (d) v.push_back(d.get());
    if (side_band) v.push_back(side_band.get());
    return v;
  }
};

// LPs of a scenario: one per node, plus the side band if its mechanism has one.
size_t NumLps(const scenario::Scenario& s);

// How long after a packet's head arrives node `n` first acts on it (Device::set_rx_delay): a
// switch's routing latency, zero for a CA.
SimTime RxDelay(const scenario::Scenario& s, int n);
// Time a cable takes, propagation plus PHY.
SimTime CableLatency(const scenario::Scenario& s, const topology::Cable& c);

// `local` lists the LP ids to build (node indexes, and NumLps - 1 for a side band); empty means
// all.
std::unique_ptr<Fabric> BuildFabric(const scenario::Scenario& s,
                                    const std::vector<int>& local = {});

}  // namespace ibemu::fabric
