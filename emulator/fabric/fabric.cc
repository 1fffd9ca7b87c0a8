#include "emulator/fabric/fabric.h"

#include <algorithm>

#include "common/mad/smp_attributes.h"
#include "common/routing/routing_engine.h"
#include "emulator/hca/hca.h"
#include "emulator/policy/builtin.h"
#include "emulator/switch/switch.h"

namespace ibemu::fabric {
namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// PortInfo encodings of a link's width and speed (IBA 14.2.5.6): LinkWidth 1x=1, 4x=2, 8x=4,
// 12x=8; LinkSpeed SDR=1, DDR=2, QDR=4, and FDR and up in LinkSpeedExt (FDR=1 ... NDR=8).
void SetLinkFields(mgmt::PortMgmt* pm, const link::LinkRate& r) {
  static constexpr uint8_t kWidthCodes[] = {0, 1, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 8};
  uint8_t w = kWidthCodes[static_cast<int>(r.width())];
  pm->link_width_active = w;
  pm->link_width_supported = pm->link_width_enabled = static_cast<uint8_t>(w | (w - 1));
  int sp = static_cast<int>(r.speed());  // SDR 0 .. NDR 6
  // A port supports what its cable runs at and below, so tools see no slower-than-possible link.
  pm->link_speed_supported = pm->link_speed_enabled =
      sp >= 2 ? 7 : static_cast<uint8_t>((2 << sp) - 1);
  if (sp <= 2) {
    pm->link_speed_active = static_cast<uint8_t>(1 << sp);
  } else {
    pm->link_speed_active = 4;
    uint8_t ext = static_cast<uint8_t>(1 << (sp - 3));
    pm->link_speed_ext_active = ext;
    pm->link_speed_ext_supported = pm->link_speed_ext_enabled =
        static_cast<uint8_t>(ext | (ext - 1));
  }
}

uint8_t MtuCode(uint32_t mtu) {
  uint8_t c = 1;
  while ((256u << (c - 1)) < mtu) ++c;
  return c;
}

uint8_t VlCapCode(int data_vls) {
  return data_vls <= 1 ? 1 : data_vls <= 2 ? 2 : data_vls <= 4 ? 3 : data_vls <= 8 ? 4 : 5;
}

// The management view of a device as it powers up: identity, link fields, and, with the
// builtin subnet manager, the LIDs and Active ports an SM would have left behind.
void InitManagement(mgmt::ManagedNode* d, const scenario::Scenario& s, int n,
                    const routing::LidMap& lids, const policy::VlArbConfig& vc) {
  const topology::Node& node = s.topo.nodes[n];
  bool sw = node.type == topology::NodeType::kSwitch;
  bool builtin = s.subnet_manager == "builtin";
  mgmt::NodeMgmt& nm = d->node_mgmt();
  nm.node_type = sw ? 2 : 1;
  nm.node_guid = nm.system_guid = node.guid;
  nm.description = node.description.empty() ? node.name : node.description;
  nm.device_id = sw ? topology::kSwitchDeviceId : topology::kCaDeviceId;
  for (int p = 0; p <= node.num_ports; ++p) {
    mgmt::PortMgmt& pm = d->port_mgmt(p);
    pm.port_guid = sw ? node.guid : node.guid + static_cast<uint64_t>(p);
    pm.pkeys.assign(nm.partition_cap, 0);
    pm.pkeys[0] = 0xFFFF;
    pm.vl_cap = pm.oper_vls = VlCapCode(s.data_vls);
    // The configured MTU is what the hardware can do, so an SM settles on the MTU the data plane
    // segments with.
    pm.mtu_cap = pm.neighbor_mtu = MtuCode(s.hca.mtu);
    for (size_t i = 0; i < vc.low.size() && i < 64; ++i) pm.vlarb_low[i] = vc.low[i];
    for (size_t i = 0; i < vc.high.size() && i < 64; ++i) pm.vlarb_high[i] = vc.high[i];
    if (vc.low.empty() && vc.high.empty())
      for (int v = 0; v < s.data_vls; ++v) pm.vlarb_low[v] = {static_cast<uint8_t>(v), 64};
    pm.vl_high_limit = vc.limit_of_high_priority;
    pm.vlarb_low_cap = static_cast<uint8_t>(std::clamp<size_t>(vc.low.size(), 8, 64));
    pm.vlarb_high_cap = static_cast<uint8_t>(std::clamp<size_t>(vc.high.size(), 8, 64));
    pm.capability_mask = sw ? mad::port_info::kCapIsNoticeSupported |
                                  mad::port_info::kCapIsTrapSupported |
                                  mad::port_info::kCapIsSlMappingSupported |
                                  mad::port_info::kCapIsSystemImageGuidSupported |
                                  mad::port_info::kCapIsExtendedSpeedsSupported
                            : mad::port_info::kCapIsSlMappingSupported |
                                  mad::port_info::kCapIsSystemImageGuidSupported |
                                  mad::port_info::kCapIsExtendedSpeedsSupported |
                                  mad::port_info::kCapIsCommunicationManagementSupported |
                                  mad::port_info::kCapIsVendorClassSupported |
                                  mad::port_info::kCapIsClientReregistrationSupported;
    if (p == 0) {
      if (!sw) continue;
      // A switch's management port is always up (as in ibsim); its LID is the switch's.
      d->port(0).phys_state = 5;
      d->port(0).port_state = 4;
      pm.lid = builtin ? lids.lid[n][0] : 0;
      continue;
    }
    const topology::Cable* c = s.topo.CableAt({n, p});
    if (c) {
      SetLinkFields(&pm, c->rate);
      d->port(p).phys_state = 5;  // LinkUp
      d->port(p).port_state = builtin ? 4 : 2;
      d->set_active_on_link_up(builtin);
      pm.lid = builtin && !sw ? lids.lid[n][p] : 0;
    } else {
      SetLinkFields(&pm, link::LinkRate{});
      pm.link_width_active = 0;
      pm.link_speed_active = 0;
      pm.link_speed_ext_active = 0;
    }
  }
  if (sw && builtin) nm.sw.linear_fdb_top = lids.max_lid();
}

// The CC agents start with the scenario's congestion_control settings: the node's own if it has
// them, else the fabric's; a switch's per-port settings; every CCA with the scenario's CC_Key.
void InitCongestionControl(mgmt::ManagedNode* d, const scenario::Scenario& s, int n) {
  auto own = s.cc.node.find(n);
  const scenario::CcSettings& cs = own != s.cc.node.end() ? own->second : s.cc.all;
  if (d->is_switch()) {
    mgmt::CcState& st = d->cc_state(0);
    st.key.key = s.cc.cc_key;
    st.sw = cs.sw;
    for (auto it = s.cc.switch_ports.lower_bound({n, 0});
         it != s.cc.switch_ports.end() && it->first.first == n; ++it)
      st.ports[static_cast<size_t>(it->first.second)] = it->second;
    return;
  }
  for (int p = 1; p <= d->num_ports(); ++p) {
    mgmt::CcState& st = d->cc_state(p);
    st.key.key = s.cc.cc_key;
    st.ca = cs.ca;
    std::copy(cs.cct.begin(), cs.cct.end(), st.cct.begin());
    st.ccti_limit = static_cast<uint16_t>(cs.cct.empty() ? 0 : cs.cct.size() - 1);
  }
}

}  // namespace

size_t NumLps(const scenario::Scenario& s) {
  cc::RegisterMechanisms();
  bool side_band =
      cc::MechanismRegistry::Get().Make(s.cc.mechanism, s.cc.params)->ForSideBand() != nullptr;
  return s.topo.nodes.size() + (side_band ? 1 : 0);
}

SimTime RxDelay(const scenario::Scenario& s, int n) {
  return s.topo.nodes[n].type == topology::NodeType::kSwitch ? s.sw.latency : 0;
}

SimTime CableLatency(const scenario::Scenario& s, const topology::Cable& c) {
  return link::PropagationDelay(c.length_m) + s.phy_latency;
}

// Whether the routing engine's SL2VL tables and path SLs are used: it needs more than one VL,
// the fabric has them, and the builtin SM programs the fabric.
bool PathSlsApply(const scenario::Scenario& s, const routing::RoutingResult& r) {
  return r.data_vls > 1 && s.data_vls >= r.data_vls && s.subnet_manager == "builtin";
}

std::unique_ptr<Fabric> BuildFabric(const scenario::Scenario& s, const std::vector<int>& local) {
  policy::RegisterBuiltins();
  const topology::Topology& t = s.topo;
  auto f = std::make_unique<Fabric>();
  f->lids = routing::LidMap::Assign(t);
  f->queuing = policy::InputQueuingRegistry::Get().Make(s.queuing);
  f->ctx.queuing = f->queuing.get();
  cc::RegisterMechanisms();
  f->cc = cc::MechanismRegistry::Get().Make(s.cc.mechanism, s.cc.params);
  if (std::unique_ptr<cc::SideBandCc> sb = f->cc->ForSideBand()) {
    SimTime latency = f->cc->SideBandLatency();
    if (latency <= 0)
      throw std::invalid_argument("mechanism " + s.cc.mechanism +
                                  ": a side band needs a latency above 0");
    int64_t id = static_cast<int64_t>(t.nodes.size());
    f->ctx.side_band_lp = id;
    f->ctx.side_band_latency = latency;
    if (local.empty() || std::find(local.begin(), local.end(), id) != local.end())
      f->side_band = std::make_unique<cc::SideBandLp>(
          static_cast<engine::LpId>(id), static_cast<int>(t.nodes.size()), latency, std::move(sb));
  }
  f->ctx.dest_index_of_lid.assign(f->lids.owner.size(), -1);
  for (size_t i = 0; i < f->lids.endpoint_lids.size(); ++i)
    f->ctx.dest_index_of_lid[f->lids.endpoint_lids[i]] = static_cast<int32_t>(i);
  f->ctx.num_destinations = static_cast<int>(f->lids.endpoint_lids.size());
  for (const auto& node : t.nodes)
    f->ctx.switch_lp.push_back(node.type == topology::NodeType::kSwitch);

  std::vector<std::string> names;
  for (const auto& fi : s.flows) names.push_back(fi.name);
  f->flows.Init(names, s.interval, s.bins());

  std::vector<bool> want(t.nodes.size(), local.empty());
  for (int n : local)
    if (n < static_cast<int>(t.nodes.size())) want[n] = true;

  routing::RoutingResult routes =
      routing::RoutingRegistry::Get().Make(s.routing)->Route(t, f->lids);

  policy::QueuingContext qc;
  qc.num_destinations = f->ctx.num_destinations;
  qc.vl_capacity_blocks = s.sw.vl_buffer_blocks;
  qc.max_switch_ports = t.MaxSwitchPorts();
  int classes = f->queuing->NumCreditClasses(qc);
  f->ctx.credit_classes = classes;
  if (f->queuing->LooksAhead()) {
    // Every device reads its receivers' routes: the LFTs the builtin SM programs.
    f->ctx.next_output.resize(t.nodes.size());
    for (const auto& [n, lft] : routes.lft) {
      f->ctx.next_output[n] = lft;
      f->ctx.next_output[n].resize(std::max(lft.size(), f->lids.owner.size()), 0xFF);
      f->ctx.next_output[n][f->lids.lid[n][0]] = 0;
    }
  } else if (classes > 1) {
    for (int d = 0; d < f->ctx.num_destinations; ++d)
      f->ctx.class_of_dest.push_back(static_cast<uint16_t>(f->queuing->CreditClass(d)));
  }

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
      if (it != routes.lft.end() && s.subnet_manager == "builtin") {
        sw->lft() = it->second;
        sw->lft()[f->lids.lid[n][0]] = 0;  // the switch's own LID: its management port
      }
      if (!s.sl2vl.empty())
        for (int in = 0; in <= node.num_ports; ++in)
          for (int out = 0; out <= node.num_ports; ++out)
            for (int sl = 0; sl < 16; ++sl) sw->SetSl2Vl(in, out, sl, s.sl2vl[sl]);
      // A routing engine that needs more VLs (dor's datelines) gives its SL2VL tables, which the
      // builtin SM programs when the fabric has the VLs, as ibemu-fabricmgr would.
      auto vls = routes.sl2vl.find(static_cast<int>(n));
      if (PathSlsApply(s, routes) && vls != routes.sl2vl.end())
        for (size_t out = 0; out < vls->second.size(); ++out)
          for (int in = 0; in <= node.num_ports; ++in)
            for (int sl = 0; sl < 16; ++sl)
              sw->SetSl2Vl(in, static_cast<int>(out), sl, vls->second[out][sl]);
      vl_blocks = s.sw.vl_buffer_blocks;
      sw->SetCc(f->cc->ForSwitch(SplitMix(s.seed ^ SplitMix(n) ^ 0xCC)));
      f->devices[n] = std::move(sw);
    } else {
      auto h = std::make_unique<hca::Hca>(id, node.name, node.num_ports, s.hca, &f->ctx, &f->flows,
                                          SplitMix(s.seed ^ SplitMix(n)));
      for (int p = 1; p <= node.num_ports; ++p) {
        h->set_lid(p, f->lids.lid[n][p]);
        if (!s.sl2vl.empty())
          for (int sl = 0; sl < 16; ++sl) h->SetSl2Vl(p, sl, s.sl2vl[sl]);
        // The SLs of the paths from the switch this port is cabled to.
        int peer = t.Peer({static_cast<int>(n), p}).node;
        auto sls = routes.path_sl.find(peer);
        if (PathSlsApply(s, routes) && sls != routes.path_sl.end()) h->SetPathSl(p, sls->second);
      }
      auto src = s.sources.find(node.name);
      if (src != s.sources.end())
        for (const hca::TrafficSource& ts : src->second) h->AddSource(ts);
      vl_blocks = s.hca.vl_buffer_blocks;
      h->SetCc(f->cc->ForHca(SplitMix(s.seed ^ SplitMix(n) ^ 0xCC)));
      f->devices[n] = std::move(h);
    }
    mgmt::ManagedNode* d = f->devices[n].get();
    d->SetStats(stats);
    d->set_mgmt_latency(s.mgmt_latency);
    InitManagement(d, s, static_cast<int>(n), f->lids, s.sw.vlarb_config);
    InitCongestionControl(d, s, static_cast<int>(n));
    // The management port's internal buffer, for GS MADs the switch sends through its crossbar.
    if (node.type == topology::NodeType::kSwitch)
      d->ConfigureBuffers(0, s.data_vls, classes, 1u << 20);
    d->set_rx_delay(RxDelay(s, static_cast<int>(n)));
    for (int p = 1; p <= node.num_ports; ++p) {
      d->ConfigureBuffers(
          p, s.data_vls, classes,
          f->queuing->ClassCapacity(vl_blocks,
                                    node.type == topology::NodeType::kSwitch ? node.num_ports : 0));
      const topology::Cable* c = t.CableAt({static_cast<int>(n), p});
      if (!c) continue;
      topology::PortRef peer = t.Peer({static_cast<int>(n), p});
      link::LinkEnd l;
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
  // External SM in one process: packets follow the LIDs the SM assigns (FabricContext::WireLid).
  if (s.subnet_manager == "external" && local.empty())
    for (uint16_t lid : f->lids.endpoint_lids) {
      const routing::LidMap::Owner& o = f->lids.owner[lid];
      f->ctx.live_lid.push_back(&f->devices[o.node]->port_mgmt(o.port).lid);
    }
  return f;
}

}  // namespace ibemu::fabric
