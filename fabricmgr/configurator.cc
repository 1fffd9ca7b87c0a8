#include "fabricmgr/configurator.h"

#include <algorithm>
#include <cstdio>

namespace ibemu::fabricmgr {
namespace {

using namespace mad;

// A PortInfo to Set, from the one read: the fields whose zero means "no change" are zeroed, so
// that only what the SM means to change changes (a PortState of Init written back would even be
// refused, IBA table 146).
SmpData ForSet(const SmpData& info) {
  SmpData d = info;
  using namespace port_info;
  for (const Field* f : {&kPortState, &kPortPhysicalState, &kLinkWidthEnabled, &kLinkSpeedEnabled,
                         &kLinkSpeedExtEnabled, &kLinkDownDefaultState})
    Set(d.data(), *f, 0);
  return d;
}

Smp SetOf(const NodeRecord& n, uint16_t attribute, uint32_t mod, const SmpData& data) {
  Smp s;
  s.path = n.path;
  s.method = method::kSet;
  s.attr = attribute;
  s.mod = mod;
  s.data = data;
  return s;
}

std::string Where(const NodeRecord& n, int port) {
  return n.name() + " port " + std::to_string(port);
}

// The ports that carry data: cabled ports 1..N of switches and CAs.
bool LinkPort(const NodeRecord& n, int p) {
  return p >= 1 && n.ports[p].linked() && n.ports[p].known;
}

int DataVls(const PortRecord& p) {
  return DataVlsOfCode(static_cast<int>(p.Field(port_info::kOperationalVls)));
}

std::array<uint8_t, 8> Pack(const std::array<uint8_t, 16>& vls, int data_vls) {
  std::array<uint8_t, 8> b{};
  for (int sl = 0; sl < 16; ++sl) {
    uint8_t vl = vls[sl];
    if (vl != 15 && data_vls > 0 && vl >= data_vls) vl = static_cast<uint8_t>(data_vls - 1);
    Set(b.data(), sl2vl_table::VlOfSl(sl), vl);
  }
  return b;
}

}  // namespace

void Configurator::Forget() {
  lft_.clear();
  lft_top_.clear();
  sl2vl_.clear();
  vlarb_.clear();
  pkeys_.clear();
}

void Configurator::Record(ConfigStats* st, const SmpReply& r, const std::string& what) {
  if (r.ok()) return;
  ++st->failed;
  if (st->errors.size() >= 5) return;
  char status[16];
  std::snprintf(status, sizeof status, "0x%04x", r.status);
  st->errors.push_back(what + (r.answered ? std::string(": status ") + status : ": no answer"));
}

ConfigStats Configurator::Program(Subnet& s, const std::map<uint64_t, uint16_t>& lids,
                                  const Routes& routes, uint16_t sm_lid) {
  ConfigStats st;
  using namespace port_info;
  struct At {
    int node, port;
  };

  // 1. PortInfo: endports (LID, SM LID, LMC, SubnetTimeout) and links (NeighborMTU, OperVLs).
  {
    std::vector<Smp> reqs;
    std::vector<At> at;
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      NodeRecord& n = s.nodes[i];
      for (int p = 0; p <= n.num_ports; ++p) {
        PortRecord& pr = n.ports[p];
        bool endport = pr.known && (n.is_switch() ? p == 0 : pr.linked());
        bool link = LinkPort(n, p);
        if (!endport && !link) continue;
        SmpData d = ForSet(pr.info);
        bool change = false;
        auto want = [&](const Field& f, uint64_t v) {
          if (Get(d.data(), f) == v) return;
          Set(d.data(), f, v);
          change = true;
        };
        if (endport) {
          auto it = lids.find(pr.guid);
          want(kLid, it == lids.end() ? 0 : it->second);
          want(kMasterSmLid, sm_lid);
          want(kLmc, 0);
          want(kSubnetTimeout, policy_.subnet_timeout);
        }
        if (link) {
          const PortRecord& peer = s.nodes[pr.peer_node].ports[pr.peer_port];
          uint64_t mtu = pr.Field(kMtuCap), vls = pr.Field(kVlCap);
          if (peer.known) {
            mtu = std::min(mtu, peer.Field(kMtuCap));
            vls = std::min(vls, peer.Field(kVlCap));
          }
          if (policy_.max_mtu) mtu = std::min<uint64_t>(mtu, policy_.max_mtu);
          if (policy_.max_data_vls)
            vls = std::min<uint64_t>(vls, CodeOfDataVls(policy_.max_data_vls));
          if (mtu) want(kNeighborMtu, mtu);
          if (vls) want(kOperationalVls, vls);
          if (policy_.vlarb) want(kVlHighLimit, policy_.vl_high_limit);
        }
        if (!change) continue;
        reqs.push_back(SetOf(n, attr::kPortInfo, static_cast<uint32_t>(p), d));
        at.push_back({static_cast<int>(i), p});
      }
    }
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      NodeRecord& n = s.nodes[at[k].node];
      ++st.port_info;
      Record(&st, got[k], "PortInfo " + Where(n, at[k].port));
      if (got[k].ok()) n.ports[at[k].port].info = got[k].data;
    }
  }

  // 2. Switches: SwitchInfo, then the LFT blocks that differ from what we wrote.
  {
    std::vector<Smp> reqs;
    std::vector<int> at;
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      NodeRecord& n = s.nodes[i];
      if (!n.is_switch()) continue;
      uint16_t top = static_cast<uint16_t>(Get(n.switch_info.data(), switch_info::kLinearFdbTop));
      bool psc = Get(n.switch_info.data(), switch_info::kPortStateChange) != 0;
      // A switch whose LinearFDBTop is not what we left there was reset (or written by another
      // SM): what we wrote is gone.
      auto known_top = lft_top_.find(n.guid);
      if (known_top == lft_top_.end() || known_top->second != top) lft_.erase(n.guid);
      if (top == routes.top_lid && !psc) continue;
      SmpData d = n.switch_info;
      Set(d.data(), switch_info::kLinearFdbTop, routes.top_lid);
      Set(d.data(), switch_info::kPortStateChange, 1);  // written 1, it clears (IBA 14.2.5.4)
      reqs.push_back(SetOf(n, attr::kSwitchInfo, 0, d));
      at.push_back(static_cast<int>(i));
    }
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      NodeRecord& n = s.nodes[at[k]];
      ++st.switch_info;
      Record(&st, got[k], "SwitchInfo " + n.name());
      if (got[k].ok()) n.switch_info = got[k].data;
    }
    reqs.clear();
    struct Block {
      int node, block;
    };
    std::vector<Block> blocks;
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      NodeRecord& n = s.nodes[i];
      auto r = routes.result.lft.find(static_cast<int>(i));
      if (!n.is_switch() || r == routes.result.lft.end()) continue;
      lft_top_[n.guid] =
          static_cast<uint16_t>(Get(n.switch_info.data(), switch_info::kLinearFdbTop));
      std::vector<uint8_t>& mine = lft_[n.guid];
      for (int b = 0; b <= routes.top_lid / lft::kLidsPerBlock; ++b) {
        SmpData d;
        d.fill(routing::kNoPort);
        bool same = mine.size() >= static_cast<size_t>((b + 1) * lft::kLidsPerBlock);
        for (int e = 0; e < lft::kLidsPerBlock; ++e) {
          size_t lid = static_cast<size_t>(b * lft::kLidsPerBlock + e);
          if (lid < r->second.size() && lid <= routes.top_lid) d[e] = r->second[lid];
          if (same && mine[lid] != d[e]) same = false;
        }
        if (same) continue;
        reqs.push_back(SetOf(n, attr::kLinearForwardingTable, static_cast<uint32_t>(b), d));
        blocks.push_back({static_cast<int>(i), b});
      }
    }
    got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      NodeRecord& n = s.nodes[blocks[k].node];
      ++st.lft_blocks;
      Record(&st, got[k], "LFT block " + std::to_string(blocks[k].block) + " of " + n.name());
      std::vector<uint8_t>& mine = lft_[n.guid];
      size_t first = static_cast<size_t>(blocks[k].block * lft::kLidsPerBlock);
      if (mine.size() < first + lft::kLidsPerBlock) mine.resize(first + lft::kLidsPerBlock, 0);
      // A block that did not take is marked unknown (0 is never what we write for a live LID
      // except port 0, so it is compared as different next time).
      for (int e = 0; e < lft::kLidsPerBlock; ++e)
        mine[first + e] = got[k].ok() ? got[k].data[e] : 0xFE;
    }
  }

  // 3. SL2VL: the engine's tables (dor), else the policy's, else left as they are.
  {
    std::vector<Smp> reqs;
    std::vector<std::tuple<uint64_t, int, int>> keys;
    std::vector<std::array<uint8_t, 8>> wanted;
    std::vector<std::string> what;
    auto add = [&](const NodeRecord& n, int in, int out, uint32_t mod,
                   const std::array<uint8_t, 8>& table) {
      auto key = std::make_tuple(n.guid, in, out);
      if (auto it = sl2vl_.find(key); it != sl2vl_.end() && it->second == table) return;
      SmpData d{};
      std::copy(table.begin(), table.end(), d.begin());
      reqs.push_back(SetOf(n, attr::kSl2VlTable, mod, d));
      keys.push_back(key);
      wanted.push_back(table);
      what.push_back("SL2VL " + n.name() + " " + std::to_string(in) + "->" + std::to_string(out));
    };
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      const NodeRecord& n = s.nodes[i];
      auto engine = routes.result.sl2vl.find(static_cast<int>(i));
      bool from_engine = engine != routes.result.sl2vl.end();
      if (!from_engine && !policy_.sl2vl) continue;
      if (!n.is_switch()) {
        if (!policy_.sl2vl || !LinkPort(n, n.entry_port)) continue;
        add(n, 0, n.entry_port, 0, Pack(*policy_.sl2vl, DataVls(n.ports[n.entry_port])));
        continue;
      }
      std::vector<int> outs;
      for (int p = 1; p <= n.num_ports; ++p)
        if (LinkPort(n, p)) outs.push_back(p);
      for (int out : outs) {
        std::array<uint8_t, 16> vls = policy_.sl2vl.value_or(std::array<uint8_t, 16>{});
        if (from_engine && static_cast<size_t>(out) < engine->second.size())
          vls = engine->second[out];
        std::array<uint8_t, 8> table = Pack(vls, DataVls(n.ports[out]));
        for (int in : std::vector<int>{0})
          add(n, in, out, static_cast<uint32_t>(in << 8 | out), table);
        for (int in : outs)
          if (in != out) add(n, in, out, static_cast<uint32_t>(in << 8 | out), table);
      }
    }
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      ++st.sl2vl;
      Record(&st, got[k], what[k]);
      if (got[k].ok())
        sl2vl_[keys[k]] = wanted[k];
      else
        sl2vl_.erase(keys[k]);
    }
  }

  // 4. VLArb, when the policy has tables.
  if (policy_.vlarb) {
    std::vector<Smp> reqs;
    std::vector<std::tuple<uint64_t, int, int>> keys;
    std::vector<SmpData> wanted;
    std::vector<std::string> what;
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      const NodeRecord& n = s.nodes[i];
      for (int p = 1; p <= n.num_ports; ++p) {
        if (!LinkPort(n, p) || (!n.is_switch() && p != n.entry_port)) continue;
        const PortRecord& pr = n.ports[p];
        int low_cap = static_cast<int>(pr.Field(port_info::kVlArbLowCap));
        int high_cap = static_cast<int>(pr.Field(port_info::kVlArbHighCap));
        struct Part {
          int block, cap;
          const std::vector<VlArbEntry>* entries;
          int offset;
        };
        for (Part part : {Part{vlarb_table::kLowFirst, low_cap, &policy_.vlarb_low, 0},
                          Part{vlarb_table::kLowSecond, low_cap, &policy_.vlarb_low, 32},
                          Part{vlarb_table::kHighFirst, high_cap, &policy_.vlarb_high, 0},
                          Part{vlarb_table::kHighSecond, high_cap, &policy_.vlarb_high, 32}}) {
          if (part.cap <= part.offset) continue;
          SmpData d{};
          for (int e = 0; e < vlarb_table::kEntriesPerBlock && part.offset + e < part.cap; ++e) {
            size_t k = static_cast<size_t>(part.offset + e);
            if (k >= part.entries->size()) break;
            Set(d.data(), vlarb_table::Vl(e), (*part.entries)[k].vl);
            Set(d.data(), vlarb_table::Weight(e), (*part.entries)[k].weight);
          }
          auto key = std::make_tuple(n.guid, p, part.block);
          if (auto it = vlarb_.find(key); it != vlarb_.end() && it->second == d) continue;
          uint32_t mod = static_cast<uint32_t>(part.block) << 16 |
                         static_cast<uint32_t>(n.is_switch() ? p : 0);
          reqs.push_back(SetOf(n, attr::kVlArbTable, mod, d));
          keys.push_back(key);
          wanted.push_back(d);
          what.push_back("VLArb block " + std::to_string(part.block) + " " + Where(n, p));
        }
      }
    }
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      ++st.vlarb;
      Record(&st, got[k], what[k]);
      if (got[k].ok())
        vlarb_[keys[k]] = wanted[k];
      else
        vlarb_.erase(keys[k]);
    }
  }

  // 5. P_Keys of the CA ports.
  {
    std::vector<Smp> reqs;
    std::vector<std::pair<uint64_t, int>> keys;
    std::vector<SmpData> wanted;
    std::vector<std::string> what;
    for (const NodeRecord& n : s.nodes) {
      if (n.is_switch() || !LinkPort(n, n.entry_port)) continue;
      std::array<uint16_t, 32> block = PKeyBlockFor(policy_, n, n.entry_port);
      SmpData d{};
      for (size_t k = 0; k < block.size(); ++k) {
        d[2 * k] = static_cast<uint8_t>(block[k] >> 8);
        d[2 * k + 1] = static_cast<uint8_t>(block[k]);
      }
      auto key = std::make_pair(n.guid, n.entry_port);
      if (auto it = pkeys_.find(key); it != pkeys_.end() && it->second == d) continue;
      reqs.push_back(SetOf(n, attr::kPKeyTable, 0, d));
      keys.push_back(key);
      wanted.push_back(d);
      what.push_back("P_Key table " + Where(n, n.entry_port));
    }
    std::vector<SmpReply> got = smp_.Transact(reqs);
    for (size_t k = 0; k < got.size(); ++k) {
      ++st.pkey;
      Record(&st, got[k], what[k]);
      if (got[k].ok())
        pkeys_[keys[k]] = wanted[k];
      else
        pkeys_.erase(keys[k]);
    }
  }
  return st;
}

int Configurator::MovePorts(Subnet& s, uint8_t from, uint8_t to, ConfigStats* stats) {
  std::vector<Smp> reqs;
  std::vector<std::pair<int, int>> at;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    NodeRecord& n = s.nodes[i];
    for (int p = 1; p <= n.num_ports; ++p) {
      if (!LinkPort(n, p) || n.ports[p].state() != from) continue;
      SmpData d = ForSet(n.ports[p].info);
      Set(d.data(), port_info::kPortState, to);
      reqs.push_back(SetOf(n, attr::kPortInfo, static_cast<uint32_t>(p), d));
      at.push_back({static_cast<int>(i), p});
    }
  }
  std::vector<SmpReply> got = smp_.Transact(reqs);
  int moved = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    NodeRecord& n = s.nodes[at[k].first];
    Record(stats, got[k], "PortState " + StateName(to) + " " + Where(n, at[k].second));
    if (!got[k].ok()) continue;
    n.ports[at[k].second].info = got[k].data;
    ++moved;
  }
  return moved;
}

int Configurator::CountNotActive(Subnet& s) {
  std::vector<Smp> reqs;
  std::vector<std::pair<int, int>> at;
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeRecord& n = s.nodes[i];
    for (int p = 1; p <= n.num_ports; ++p)
      if (LinkPort(n, p)) {
        Smp q;
        q.path = n.path;
        q.attr = attr::kPortInfo;
        q.mod = static_cast<uint32_t>(p);
        reqs.push_back(q);
        at.push_back({static_cast<int>(i), p});
      }
  }
  std::vector<SmpReply> got = smp_.Transact(reqs);
  int not_active = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    PortRecord& pr = s.nodes[at[k].first].ports[at[k].second];
    if (got[k].ok()) pr.info = got[k].data;
    if (!got[k].ok() || pr.state() != port_info::kStateActive) ++not_active;
  }
  return not_active;
}

}  // namespace ibemu::fabricmgr
