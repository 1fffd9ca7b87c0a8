// The management plane from the outside: unmodified infiniband-diags and OpenSM binaries (Debian
// packages) attached to an emulated fabric through `ibemu exec`, which puts our libibumad in
// front of them. Each test brings a fabric up with `ibemu up` and down again.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "common/topology/ibnetdiscover_parser.h"
#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

// Nodes by NodeDescription and cables as unordered pairs of "description:port", from any
// ibnetdiscover-format text: what two discoveries of the same fabric must agree on.
struct Shape {
  std::set<std::string> switches, cas;
  std::set<std::pair<std::string, std::string>> links;
};

Shape ShapeOf(const topology::Topology& t) {
  Shape s;
  for (const auto& n : t.nodes)
    (n.type == topology::NodeType::kSwitch ? s.switches : s.cas).insert(n.description);
  for (const auto& c : t.cables) {
    std::string a = t.nodes[c.a.node].description + ":" + std::to_string(c.a.port);
    std::string b = t.nodes[c.b.node].description + ":" + std::to_string(c.b.port);
    s.links.insert(std::minmax(a, b));
  }
  return s;
}

Shape ShapeOfText(const std::string& text, const std::string& path) {
  std::ofstream(path) << text;
  return ShapeOf(topology::ParseIbnetdiscoverFile(path, {link::Width::k4x, link::Speed::kQDR}));
}

class ManagementTools : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    // A sanitized libibumad cannot be loaded into the uninstrumented Debian binaries.
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibumad";
#endif
    if (!HaveTool("ibnetdiscover") || !HaveTool("opensm"))
      GTEST_SKIP() << "infiniband-diags and opensm are not installed (scripts/install-deps.sh)";
    if (!fs::exists(fs::path(IBEMU_BINARY).parent_path().parent_path() /
                    "hostlib/umad/libibumad.so.3"))
      GTEST_FAIL() << "libibumad.so.3 was not built";
  }
  pid_t StartOpenSm(const UpFabric& f) {
    osm_log_ = f.dir() + "/opensm.log";
    pid_t pid = testing::StartOpenSm(f);
    EXPECT_GT(pid, 0) << "opensm never reached SUBNET UP";
    return pid;
  }
  static void Stop(pid_t pid) {
    StopProcess(pid);
  }
  std::string osm_log_;
};

TEST_F(ManagementTools, IbnetdiscoverFindsTheTopologyWithAndWithoutAnSm) {
  std::string topo = Src("configs/topologies/testbed.topo");
  Shape want =
      ShapeOf(topology::ParseIbnetdiscoverFile(topo, {link::Width::k4x, link::Speed::kQDR}));
  UpFabric f(topo, {"--sm", "external"});
  CliResult r = f.Exec("H4:1", "ibnetdiscover");
  ASSERT_EQ(r.status, 0) << r.out;
  Shape got = ShapeOfText(r.out, f.dir() + "/disc1.topo");
  EXPECT_EQ(got.switches, want.switches);
  EXPECT_EQ(got.cas, want.cas);
  EXPECT_EQ(got.links, want.links);
  EXPECT_NE(r.out.find("lid 0 4xQDR"), std::string::npos) << "no SM yet: LIDs are 0";

  pid_t sm = StartOpenSm(f);
  r = f.Exec("H7:1", "ibnetdiscover");
  Stop(sm);
  ASSERT_EQ(r.status, 0) << r.out;
  got = ShapeOfText(r.out, f.dir() + "/disc2.topo");
  EXPECT_EQ(got.links, want.links);
  // Every CA port now has a LID from OpenSM.
  std::regex ca_lid("# lid ([0-9]+) lmc 0");
  int cas = 0;
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), ca_lid);
       it != std::sregex_iterator(); ++it) {
    EXPECT_NE((*it)[1].str(), "0");
    ++cas;
  }
  EXPECT_EQ(cas, 7);
}

TEST_F(ManagementTools, OpenSmProgramsLidsAndForwardingTablesThatToolsRead) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  pid_t sm = StartOpenSm(f);
  CliResult who = f.Exec("H5:1", "smpquery -D nodeinfo 0");
  CliResult pi = f.Exec("H5:1", "smpquery -D portinfo 0 1");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(pi.out, m, std::regex("Lid:\\.+([0-9]+)"))) << pi.out;
  int h5 = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(pi.out, m, std::regex("SMLid:\\.+([0-9]+)"))) << pi.out;
  int smlid = std::stoi(m[1]);
  EXPECT_NE(smlid, 0);
  EXPECT_NE(pi.out.find("LinkState:.......................Active"), std::string::npos) << pi.out;
  // S1's LFT (found by DR: H1 -> S1) sends H5's LID towards S2 (port 4), S2's to its port 2.
  CliResult s1 = f.Exec("H1:1", "ibroute -D 0,1");
  CliResult s2 = f.Exec("H1:1", "ibroute -D 0,1,4");
  Stop(sm);
  ASSERT_EQ(s1.status, 0) << s1.out;
  ASSERT_EQ(s2.status, 0) << s2.out;
  char want1[64], want2[64];
  std::snprintf(want1, sizeof want1, "0x%04x 004", h5);
  std::snprintf(want2, sizeof want2, "0x%04x 002", h5);
  EXPECT_NE(s1.out.find(want1), std::string::npos) << s1.out;
  EXPECT_NE(s2.out.find(want2), std::string::npos) << s2.out;
  EXPECT_NE(s1.out.find("valid lids dumped"), std::string::npos) << s1.out;
}

TEST_F(ManagementTools, SmpqueryAttributesAndLinkInfo) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {"--sm", "external"});
  pid_t sm = StartOpenSm(f);
  struct Q {
    std::string cmd, want;
  } qs[] = {
      {"smpquery -D nodeinfo 0,1", "NodeType:........................Switch"},
      {"smpquery -D nodedesc 0,1", "S1 Infiniscale-IV Mellanox Technologies"},
      {"smpquery -D switchinfo 0,1", "LinearFdbTop:....................9"},
      {"smpquery -D portinfo 0,1 4", "LinkSpeedActive:.................10.0 Gbps"},
      {"smpquery -D sl2vl 0,1 4", "ports: in  1, out  4:"},
      {"smpquery -D vlarb 0,1 4", "VL    : |0x0 |"},
      {"smpquery -D pkeys 0", "0xffff"},
      {"smpquery -D guidinfo 0", "0x0002c90300000301"},
  };
  for (const Q& q : qs) {
    CliResult r = f.Exec("H1:1", q.cmd);
    EXPECT_EQ(r.status, 0) << q.cmd << "\n" << r.out;
    EXPECT_NE(r.out.find(q.want), std::string::npos) << q.cmd << "\n" << r.out;
  }
  CliResult links = f.Exec("H2:1", "iblinkinfo");
  Stop(sm);
  EXPECT_EQ(links.status, 0) << links.out;
  // Eight cables, each seen from both ends' switch listings or the CA listing: every host link
  // and the S1-S2 trunk appear Active, and no link is slower than it could be.
  EXPECT_EQ(links.out.find("Could be"), std::string::npos) << links.out;
  EXPECT_NE(links.out.find("==( 4X          10.0 Gbps Active/  LinkUp)==>"), std::string::npos)
      << links.out;
}

// SA answers longer than one MAD travel as RMPP segments that our libibumad cuts (OpenSM's side)
// and reassembles and acknowledges (the tools' side).
TEST_F(ManagementTools, SaqueryAndIbqueryerrorsGetWholeSaAnswers) {
  std::string topo = Src("configs/topologies/testbed.topo");
  Shape want =
      ShapeOf(topology::ParseIbnetdiscoverFile(topo, {link::Width::k4x, link::Speed::kQDR}));
  UpFabric f(topo, {"--sm", "external"});
  pid_t sm = StartOpenSm(f);
  CliResult nr = f.Exec("H4:1", "saquery NR");  // 9 records of 108 bytes: 6 segments
  CliResult pr = f.Exec("H4:1", "saquery PR");  // 81 path records: 26 segments
  CliResult issm = f.Exec("H4:1", "saquery -s");
  CliResult qe = f.Exec("H4:1", "ibqueryerrors");  // asks the SA for all path records
  Stop(sm);
  const std::string osm = ReadFile(osm_log_);

  ASSERT_EQ(nr.status, 0) << nr.out;
  std::set<std::string> nodes, all = want.switches;
  all.insert(want.cas.begin(), want.cas.end());
  int records = 0;
  std::regex desc("NodeDescription\\.+([^\\n]*)");
  for (auto it = std::sregex_iterator(nr.out.begin(), nr.out.end(), desc);
       it != std::sregex_iterator(); ++it, ++records)
    nodes.insert((*it)[1].str());
  EXPECT_EQ(records, 9) << nr.out;
  EXPECT_EQ(nodes, all) << nr.out;

  ASSERT_EQ(pr.status, 0) << pr.out;
  size_t paths = 0;
  for (size_t at = 0; (at = pr.out.find("PathRecord dump:", at)) != std::string::npos; ++at)
    ++paths;
  EXPECT_EQ(paths, 9u * 9u) << pr.out;  // every LID to every LID, itself included

  // One SM port, and no spurious zero record from a 256-byte reading of a one-segment answer.
  ASSERT_EQ(issm.status, 0) << issm.out;
  EXPECT_EQ(issm.out.find("PortInfoRecord dump:"), issm.out.rfind("PortInfoRecord dump:"))
      << issm.out;
  EXPECT_NE(issm.out.find("master_sm_base_lid......1"), std::string::npos) << issm.out;

  EXPECT_EQ(qe.status, 0) << qe.out;
  EXPECT_NE(qe.out.find("9 nodes checked, 0 bad nodes found"), std::string::npos) << qe.out;
  EXPECT_EQ(qe.out.find("Query SA failed"), std::string::npos) << qe.out;

  // OpenSM could send every answer (5430) and none timed out waiting for ACKs (5412).
  EXPECT_EQ(osm.find("ERR 5430"), std::string::npos) << osm;
  EXPECT_EQ(osm.find("ERR 5412"), std::string::npos) << osm;
}

TEST_F(ManagementTools, PerfqueryCountsWhatAFlowSent) {
  UpFabric f(Src("tests/data/scenarios/mgmt_flow.yaml"), {});
  // The flow runs for the first 200 us of virtual time; 10 ms leaves it ample time to drain.
  ASSERT_TRUE(f.WaitForVirtualTime(0.010)) << "the fabric's virtual time did not reach 10 ms";
  // Asked on H1 itself, the PMA answers without a MAD crossing H1's link.
  CliResult base = f.Exec("H1:1", "perfquery");
  CliResult ext = f.Exec("H1:1", "perfquery -x");
  CliResult sl = f.Exec("H1:1", "perfquery -X");
  f.Down();
  ASSERT_EQ(base.status, 0) << base.out;
  ASSERT_EQ(ext.status, 0) << ext.out;
  nlohmann::json j;
  std::ifstream(f.dir() + "/results/summary.json") >> j;
  uint64_t pkts = j["flows"][0]["rx_packets"].get<uint64_t>();
  ASSERT_GT(pkts, 0u);
  // Every packet: LRH 8 + BTH 12 + 2048 payload + ICRC 4 + VCRC 2 octets; counted in 4-octet
  // words (IBA 16.1.3.5).
  uint64_t words = pkts * (8 + 12 + 2048 + 4 + 2) / 4;
  auto field = DumpField;
  EXPECT_EQ(field(base.out, "PortXmitData"), static_cast<int64_t>(words)) << base.out;
  EXPECT_EQ(field(base.out, "PortXmitPkts"), static_cast<int64_t>(pkts)) << base.out;
  EXPECT_EQ(field(ext.out, "PortXmitData"), static_cast<int64_t>(words)) << ext.out;
  EXPECT_EQ(field(sl.out, "XmtDataSL0"), static_cast<int64_t>(words)) << sl.out;
  // RC ACKs came back on the same port: the receive side counts them, not the data.
  EXPECT_GT(field(base.out, "PortRcvPkts"), 0) << base.out;
}

}  // namespace
}  // namespace ibemu::testing
