#include "fabricmgr/discovery.h"

#include <cstring>
#include <stdexcept>

namespace ibemu::fabricmgr {
namespace {

using namespace mad;

Smp Get(const std::vector<uint8_t>& path, uint16_t attribute, uint32_t mod = 0) {
  Smp s;
  s.path = path;
  s.attr = attribute;
  s.mod = mod;
  return s;
}

int AddNode(Subnet& s, const SmpData& ni, std::vector<uint8_t> path) {
  NodeRecord r;
  r.node_info = ni;
  r.guid = Get(ni.data(), node_info::kNodeGuid);
  r.type = static_cast<uint8_t>(Get(ni.data(), node_info::kNodeType));
  r.num_ports = static_cast<int>(Get(ni.data(), node_info::kNumPorts));
  r.path = std::move(path);
  r.entry_port = static_cast<int>(Get(ni.data(), node_info::kLocalPortNum));
  r.ports.resize(static_cast<size_t>(r.num_ports) + 1);
  for (int p = 0; p <= r.num_ports; ++p) r.ports[p].num = p;
  int index = static_cast<int>(s.nodes.size());
  s.by_guid[r.guid] = index;
  s.nodes.push_back(std::move(r));
  return index;
}

// NodeInfo.PortGUID is the GUID of the port the SMP arrived on (a switch has one, port 0's).
void NotePortGuid(NodeRecord& n, const SmpData& ni) {
  int local = static_cast<int>(Get(ni.data(), node_info::kLocalPortNum));
  uint64_t guid = Get(ni.data(), node_info::kPortGuid);
  if (n.is_switch())
    n.ports[0].guid = guid;
  else if (local >= 1 && local <= n.num_ports)
    n.ports[local].guid = guid;
}

}  // namespace

Smp NodeInfoGet(const std::vector<uint8_t>& path) {
  return Get(path, attr::kNodeInfo);
}
Smp PortInfoGet(const std::vector<uint8_t>& path, int port) {
  return Get(path, attr::kPortInfo, static_cast<uint32_t>(port));
}
Smp SwitchInfoGet(const std::vector<uint8_t>& path) {
  return Get(path, attr::kSwitchInfo);
}
Smp NodeDescriptionGet(const std::vector<uint8_t>& path) {
  return Get(path, attr::kNodeDescription);
}

Subnet Discovery::Run() {
  Subnet s;
  unanswered_ = 0;
  SmpReply self = smp_.Transact(NodeInfoGet({}));
  if (!self.ok()) throw std::runtime_error("the SM's own node does not answer NodeInfo");
  s.sm_node = AddNode(s, self.data, {});
  s.sm_port = static_cast<int>(Get(self.data.data(), node_info::kLocalPortNum));
  NotePortGuid(s.nodes[s.sm_node], self.data);

  std::vector<int> fresh{s.sm_node};                // nodes to describe
  std::vector<std::pair<int, int>> extra_ca_ports;  // (node, port): CAs met again elsewhere
  extra_ca_ports.push_back({s.sm_node, s.sm_port});
  while (!fresh.empty() || !extra_ca_ports.empty()) {
    // Describe what is new.
    enum Kind { kDesc, kSwitch, kPort };
    struct Want {
      int node;
      Kind kind;
      int port;
    };
    std::vector<Smp> reqs;
    std::vector<Want> wants;
    for (int n : fresh) {
      const NodeRecord& r = s.nodes[n];
      reqs.push_back(NodeDescriptionGet(r.path));
      wants.push_back({n, kDesc, 0});
      if (r.is_switch()) {
        reqs.push_back(SwitchInfoGet(r.path));
        wants.push_back({n, kSwitch, 0});
        for (int p = 0; p <= r.num_ports; ++p) {
          reqs.push_back(PortInfoGet(r.path, p));
          wants.push_back({n, kPort, p});
        }
      }
    }
    for (auto [n, p] : extra_ca_ports) {
      reqs.push_back(PortInfoGet(s.nodes[n].path, p));
      wants.push_back({n, kPort, p});
    }
    extra_ca_ports.clear();
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t i = 0; i < got.size(); ++i) {
      if (!got[i].ok()) {
        ++unanswered_;
        continue;
      }
      NodeRecord& r = s.nodes[wants[i].node];
      switch (wants[i].kind) {
        case kDesc: {
          const char* text = reinterpret_cast<const char*>(got[i].data.data());
          r.description.assign(text, strnlen(text, got[i].data.size()));
          break;
        }
        case kSwitch:
          r.switch_info = got[i].data;
          break;
        case kPort:
          r.ports[wants[i].port].known = true;
          r.ports[wants[i].port].info = got[i].data;
          break;
      }
    }

    // Look through every live port of the new switches (and out of the SM's own port).
    struct Probe {
      int node, port;
    };
    std::vector<Smp> probes;
    std::vector<Probe> from;
    for (int n : fresh) {
      const NodeRecord& r = s.nodes[n];
      if (r.path.size() >= static_cast<size_t>(kMaxDrHops)) continue;
      auto probe = [&](int p) {
        std::vector<uint8_t> path = r.path;
        path.push_back(static_cast<uint8_t>(p));
        probes.push_back(NodeInfoGet(path));
        from.push_back({n, p});
      };
      if (r.is_switch()) {
        for (int p = 1; p <= r.num_ports; ++p) {
          const PortRecord& pr = r.ports[p];
          if (pr.known && !pr.linked() && pr.phys() == port_info::kPhysLinkUp &&
              pr.state() >= port_info::kStateInit)
            probe(p);
        }
      } else if (n == s.sm_node) {
        probe(s.sm_port);
      }
    }
    fresh.clear();
    std::vector<SmpReply> seen = smp_.Transact(probes);
    for (size_t i = 0; i < seen.size(); ++i) {
      if (!seen[i].ok()) {
        ++unanswered_;
        continue;
      }
      const SmpData& ni = seen[i].data;
      int there = s.Find(Get(ni.data(), node_info::kNodeGuid));
      int their_port = static_cast<int>(Get(ni.data(), node_info::kLocalPortNum));
      if (there < 0) {
        std::vector<uint8_t> path = s.nodes[from[i].node].path;
        path.push_back(static_cast<uint8_t>(from[i].port));
        there = AddNode(s, ni, std::move(path));
        fresh.push_back(there);
        if (!s.nodes[there].is_switch()) extra_ca_ports.push_back({there, their_port});
      } else if (!s.nodes[there].is_switch() && their_port <= s.nodes[there].num_ports &&
                 !s.nodes[there].ports[their_port].known) {
        extra_ca_ports.push_back({there, their_port});
      }
      NodeRecord& peer = s.nodes[there];
      if (their_port < 0 || their_port > peer.num_ports) continue;
      NotePortGuid(peer, ni);
      PortRecord& a = s.nodes[from[i].node].ports[from[i].port];
      PortRecord& b = peer.ports[their_port];
      a.peer_node = there;
      a.peer_port = their_port;
      b.peer_node = from[i].node;
      b.peer_port = from[i].port;
    }
  }
  return s;
}

}  // namespace ibemu::fabricmgr
