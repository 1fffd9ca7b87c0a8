// ibemu-fabricmgr's logic without a fabric: LIDs that survive a restart through the guid2lid
// table, the policy file and its errors, P_Key tables from partitions, routing a discovered
// subnet with the emulator's engines, and what `show` prints.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fabricmgr/lid_manager.h"
#include "fabricmgr/policy.h"
#include "fabricmgr/router.h"
#include "fabricmgr/subnet.h"
#include "fabricmgr/views.h"

namespace ibemu::fabricmgr {
namespace {

namespace fs = std::filesystem;

// A file in the temporary directory, removed by the test that uses it.
std::string TempPath(const std::string& leaf) {
  return (fs::temp_directory_path() / ("ibemu_fm_unit_" + std::to_string(getpid()) + "_" + leaf))
      .string();
}

// ---------------------------------------------------------------------------------------------
// LIDs

TEST(LidManager, GivesTheLowestFreeLidsInTheOrderAsked) {
  LidManager m("");
  int changed = 0;
  auto lids = m.Assign({{0xA, 0}, {0xB, 0}, {0xC, 0}}, &changed);
  EXPECT_EQ(lids, (std::map<uint64_t, uint16_t>{{0xA, 1}, {0xB, 2}, {0xC, 3}}));
  EXPECT_EQ(changed, 3);
  lids = m.Assign({{0xA, 1}, {0xB, 2}, {0xC, 3}}, &changed);
  EXPECT_EQ(changed, 0);
}

TEST(LidManager, KeepsLidsAcrossARestartThroughItsFile) {
  std::string file = TempPath("guid2lid");
  fs::remove(file);
  std::map<uint64_t, uint16_t> first;
  {
    LidManager m(file);
    first = m.Assign({{0x10, 0}, {0x20, 0}, {0x30, 0}, {0x40, 0}}, nullptr);
    std::string error;
    ASSERT_TRUE(m.Save(&error)) << error;
  }
  // Asked in another order, with the ports' LIDs lost (a fabric brought up again).
  LidManager again(file);
  EXPECT_TRUE(again.warnings().empty());
  int changed = 0;
  auto lids = again.Assign({{0x40, 0}, {0x30, 0}, {0x20, 0}, {0x10, 0}}, &changed);
  EXPECT_EQ(lids, first);
  EXPECT_EQ(changed, 4);  // each port needs its LID written again
  fs::remove(file);
}

TEST(LidManager, HonoursLidsThePortsHaveUnlessTheTableGaveThemAway) {
  std::string file = TempPath("guid2lid-2");
  std::ofstream(file) << "# comment\n0x10 5\nnot a line\n0x11 5\n0x12 0\n0x13 7\n";
  LidManager m(file);
  EXPECT_EQ(m.warnings().size(), 3u);  // the junk, the duplicate LID 5, LID 0
  int changed = 0;
  // 0x20 already has LID 9 (set by an SM before us); 0x21 claims 5, which the table keeps for
  // 0x10 although 0x10 is absent now (its cable may come back); 0x13 has LID 7 in the table.
  auto lids = m.Assign({{0x20, 9}, {0x21, 5}, {0x13, 0}}, &changed);
  EXPECT_EQ(lids[0x20], 9);
  EXPECT_EQ(lids[0x13], 7);
  EXPECT_NE(lids[0x21], 5);
  EXPECT_NE(lids[0x21], 7);
  EXPECT_NE(lids[0x21], 9);
  EXPECT_EQ(lids[0x21], 1);
  EXPECT_EQ(changed, 2);
  fs::remove(file);
}

// ---------------------------------------------------------------------------------------------
// Policy

TEST(Policy, TheExampleInConfigsLoads) {
  Policy p = LoadPolicy(std::string(IBEMU_SOURCE_DIR) + "/configs/fabricmgr/policy.yaml");
  EXPECT_EQ(p.engine, "updown");
  EXPECT_EQ(p.priority, 14);
  ASSERT_TRUE(p.sl2vl.has_value());
  EXPECT_EQ((*p.sl2vl)[1], 1);
  EXPECT_TRUE(p.vlarb);
  EXPECT_FALSE(p.vlarb_low.empty());
  ASSERT_EQ(p.partitions.size(), 2u);
  EXPECT_EQ(p.partitions[0].pkey, 0x7FFF);
  EXPECT_TRUE(p.partitions[0].all);
  EXPECT_FALSE(p.partitions[1].full);
  Policy dor = LoadPolicy(std::string(IBEMU_SOURCE_DIR) + "/configs/fabricmgr/torus-dor.yaml");
  EXPECT_EQ(dor.engine, "dor");
  EXPECT_EQ(dor.fallback, "updown");
}

TEST(Policy, ErrorsNameTheFileLineAndField) {
  std::string file = TempPath("bad.yaml");
  auto error_of = [&](const std::string& text) {
    std::ofstream(file) << text;
    try {
      LoadPolicy(file);
    } catch (const PolicyError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("routing:\n  engin: minhop\n"),
            file + ":2: routing.engin: unknown key (known: engine, fallback)");
  EXPECT_NE(error_of("qos:\n  sl2vl: [0, 1]\n").find(":2: qos.sl2vl: expected 16 VLs"),
            std::string::npos);
  EXPECT_NE(error_of("sm:\n  priority: 16\n").find("sm.priority: 16 is above 15"),
            std::string::npos);
  EXPECT_NE(error_of("links:\n  max_mtu: 3000\n").find("links.max_mtu"), std::string::npos);
  EXPECT_NE(error_of("partitions:\n  - {pkey: 0x8001}\n").find("partitions[0].pkey"),
            std::string::npos);
  EXPECT_NE(error_of("partitions:\n  - {pkey: 2, membership: half}\n").find("membership"),
            std::string::npos);
  EXPECT_NE(error_of("sm: [1\n").find("syntax"), std::string::npos);
  EXPECT_EQ(error_of("partitions:\n  - {pkey: 0x7fff}\n  - {pkey: 0x0002, members: [H1]}\n"),
            "no error");
  fs::remove(file);
}

TEST(Policy, PKeyTablesPutTheDefaultPartitionFirst) {
  Policy p = DefaultPolicy();
  Partition storage;
  storage.pkey = 0x0002;
  storage.members = {"H1", "0x0002c90300000501"};
  storage.full = false;
  p.partitions.insert(p.partitions.begin(), storage);  // listed first, still not index 0
  NodeRecord h1;
  h1.description = "H1 mlx4_0";
  h1.num_ports = 1;
  h1.ports.resize(2);
  h1.ports[1].guid = 0x0002c90300000301;
  auto t = PKeyBlockFor(p, h1, 1);
  EXPECT_EQ(t[0], 0xFFFF);
  EXPECT_EQ(t[1], 0x0002);  // limited: bit 15 clear
  EXPECT_EQ(t[2], 0);
  NodeRecord h2 = h1;
  h2.description = "H2 mlx4_0";
  h2.ports[1].guid = 0x0002c90300000401;
  t = PKeyBlockFor(p, h2, 1);
  EXPECT_EQ(t[0], 0xFFFF);
  EXPECT_EQ(t[1], 0);
  NodeRecord h3 = h2;
  h3.description = "H3 mlx4_0";
  h3.ports[1].guid = 0x0002c90300000501;  // a member by port GUID
  EXPECT_EQ(PKeyBlockFor(p, h3, 1)[1], 0x0002);
}

// ---------------------------------------------------------------------------------------------
// Routing a discovered subnet

// One switch S (4 ports) with CAs A and B on ports 1 and 3, as discovery would record them.
Subnet SmallSubnet() {
  Subnet s;
  auto add = [&](uint64_t guid, uint8_t type, int ports, const std::string& desc) {
    NodeRecord r;
    r.guid = guid;
    r.type = type;
    r.num_ports = ports;
    r.description = desc;
    r.ports.resize(ports + 1);
    for (int p = 0; p <= ports; ++p) {
      r.ports[p].num = p;
      r.ports[p].known = true;
      mad::Set(r.ports[p].info.data(), mad::port_info::kPortState, mad::port_info::kStateActive);
      mad::Set(r.ports[p].info.data(), mad::port_info::kLinkWidthActive, 2);
      mad::Set(r.ports[p].info.data(), mad::port_info::kLinkSpeedActive, 4);
    }
    s.by_guid[guid] = static_cast<int>(s.nodes.size());
    s.nodes.push_back(r);
    return static_cast<int>(s.nodes.size()) - 1;
  };
  int a = add(0xA0, mad::node_info::kTypeCa, 1, "A hca");
  int sw = add(0x50, mad::node_info::kTypeSwitch, 4, "S switch");
  int b = add(0xB0, mad::node_info::kTypeCa, 1, "B hca");
  s.nodes[a].ports[1].guid = 0xA1;
  s.nodes[b].ports[1].guid = 0xB1;
  s.nodes[sw].ports[0].guid = 0x50;
  s.nodes[sw].path = {1};
  s.nodes[b].path = {1, 3};
  auto link = [&](int x, int px, int y, int py) {
    s.nodes[x].ports[px].peer_node = y;
    s.nodes[x].ports[px].peer_port = py;
    s.nodes[y].ports[py].peer_node = x;
    s.nodes[y].ports[py].peer_port = px;
  };
  link(a, 1, sw, 1);
  link(sw, 3, b, 1);
  s.sm_node = a;
  s.sm_port = 1;
  return s;
}

TEST(Router, RoutesADiscoveredSubnetWithTheNamedEngine) {
  Subnet s = SmallSubnet();
  topology::Topology t = ToTopology(s);
  ASSERT_EQ(t.nodes.size(), 3u);
  EXPECT_EQ(t.nodes[1].name, "S");
  EXPECT_EQ(t.cables.size(), 2u);
  std::map<uint64_t, uint16_t> lids{{0xA1, 7}, {0x50, 2}, {0xB1, 12}};
  Routes r = ComputeRoutes(s, lids, "minhop", "minhop");
  EXPECT_EQ(r.top_lid, 12);
  const std::vector<uint8_t>& lft = r.result.lft.at(1);
  EXPECT_EQ(lft[7], 1);
  EXPECT_EQ(lft[2], 0);
  EXPECT_EQ(lft[12], 3);
  EXPECT_EQ(lft[5], routing::kNoPort);
  EXPECT_THROW(ComputeRoutes(s, lids, "no-such-engine", "minhop"), std::invalid_argument);
  EXPECT_EQ(s.links(), 2);

  // What `show` makes of it.
  SmStatus sm;
  sm.port_guid = 0xA1;
  sm.lid = 7;
  sm.engine = r.engine;
  nlohmann::json nodes = Answer({{"show", "nodes"}}, sm, s, lids, r);
  ASSERT_TRUE(nodes["ok"].get<bool>()) << nodes.dump();
  EXPECT_EQ(nodes["nodes"].size(), 3u);
  EXPECT_NE(FormatNodes(nodes).find("Switch 0x0000000000000050  2"), std::string::npos)
      << FormatNodes(nodes);
  nlohmann::json routes = Answer({{"show", "routes"}, {"switch", "S"}}, sm, s, lids, r);
  std::string text = FormatRoutes(routes);
  EXPECT_NE(text.find("     12     3  B[1]"), std::string::npos) << text;
  nlohmann::json ports = Answer({{"show", "ports"}}, sm, s, lids, r);
  EXPECT_EQ(ports["ports"].size(), 5u) << ports.dump();  // A1, S0, S1, S3, B1
  nlohmann::json bad = Answer({{"show", "routes"}, {"switch", "A"}}, sm, s, lids, r);
  EXPECT_FALSE(bad["ok"].get<bool>());
}

TEST(Router, TopologyKeyChangesWithACableAndNotWithTheOrderOfDiscovery) {
  Subnet s = SmallSubnet();
  Subnet swapped = s;
  std::swap(swapped.nodes[0], swapped.nodes[2]);
  // Re-point the cables at the swapped indices.
  for (NodeRecord& n : swapped.nodes)
    for (PortRecord& p : n.ports)
      if (p.peer_node == 0)
        p.peer_node = 2;
      else if (p.peer_node == 2)
        p.peer_node = 0;
  EXPECT_EQ(s.TopologyKey(), swapped.TopologyKey());
  Subnet cut = s;
  cut.nodes[1].ports[3].peer_node = -1;
  cut.nodes[2].ports[1].peer_node = -1;
  EXPECT_NE(s.TopologyKey(), cut.TopologyKey());
}

}  // namespace
}  // namespace ibemu::fabricmgr
