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

#include "emulator/topology/ibnetdiscover_parser.h"
#include "tests/integration/cli_util.h"

namespace ibemu::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string Src(const std::string& rel) {
  return std::string(IBEMU_SOURCE_DIR) + "/" + rel;
}

bool HaveTool(const std::string& t) {
  return Shell("command -v " + t + " >/dev/null").status == 0 || fs::exists("/usr/sbin/" + t);
}

// A fabric that is up for the length of one test, with its own run directory and name.
class UpFabric {
 public:
  UpFabric(const std::string& file, const std::vector<std::string>& extra) {
    name_ = "mgmt" + std::to_string(getpid()) + "_" + std::to_string(++count_);
    dir_ = "/tmp/ibemu_mgmt_" + name_;
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
    std::vector<std::string> args{"up", file, "--name", name_, "-q", "-o", dir_ + "/results"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = SpawnIbemu(args, dir_ + "/up.log");
    for (int i = 0; i < 100 && !fs::exists(dir_ + "/ibemu-up-" + name_ + ".json"); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~UpFabric() {
    Down();
    fs::remove_all(dir_);
  }
  // Runs a tool on node:port; stdout and stderr together.
  CliResult Exec(const std::string& port, const std::string& cmd) const {
    return Shell("IBEMU_RUN_DIR=" + dir_ + " timeout 60 " + IBEMU_BINARY + " exec --name " + name_ +
                 " --port " + port + " -- " + cmd);
  }
  pid_t SpawnExec(const std::string& port, const std::string& cmd, const std::string& log) const {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("IBEMU_RUN_DIR", dir_.c_str(), 1);
      std::string c = std::string("exec ") + IBEMU_BINARY + " exec --name " + name_ + " --port " +
                      port + " -- " + cmd + " >" + log + " 2>&1";
      execl("/bin/sh", "sh", "-c", c.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  }
  void Down() {
    if (pid_ <= 0) return;
    Shell("IBEMU_RUN_DIR=" + dir_ + " " + IBEMU_BINARY + " down --name " + name_);
    int st = 0;
    waitpid(pid_, &st, 0);
    pid_ = -1;
  }
  const std::string& dir() const { return dir_; }

 private:
  static inline int count_ = 0;
  std::string name_, dir_;
  pid_t pid_ = -1;
};

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

bool WaitForLine(const std::string& file, const std::string& what, double seconds) {
  auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    std::ifstream f(file);
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().find(what) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
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
  // Starts OpenSM on H1 and waits for SUBNET UP; returns its pid.
  pid_t StartOpenSm(const UpFabric& f) {
    std::string conf = f.dir() + "/opensm.conf";
    Shell("opensm -c " + conf + " >/dev/null");
    Shell("sed -i 's/^force_log_flush .*/force_log_flush TRUE/' " + conf);
    setenv("OSM_CACHE_DIR", f.dir().c_str(), 1);
    osm_log_ = f.dir() + "/opensm.log";
    pid_t pid = f.SpawnExec("H1:1", "opensm -F " + conf + " -f " + osm_log_, f.dir() + "/osm.out");
    EXPECT_TRUE(WaitForLine(osm_log_, "SUBNET UP", 30)) << "opensm never reached SUBNET UP";
    return pid;
  }
  static void Stop(pid_t pid) {
    kill(pid, SIGTERM);
    int st = 0;
    waitpid(pid, &st, 0);
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

TEST_F(ManagementTools, PerfqueryCountsWhatAFlowSent) {
  UpFabric f(Src("tests/data/scenarios/mgmt_flow.yaml"), {});
  // The flow runs for 200 us of virtual time (real time at pace 1); give it ample time to drain.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
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
  auto field = [](const std::string& out, const std::string& name) -> int64_t {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(name + ":\\.+([0-9]+)"))) return -1;
    return std::stoll(m[1]);
  };
  EXPECT_EQ(field(base.out, "PortXmitData"), static_cast<int64_t>(words)) << base.out;
  EXPECT_EQ(field(base.out, "PortXmitPkts"), static_cast<int64_t>(pkts)) << base.out;
  EXPECT_EQ(field(ext.out, "PortXmitData"), static_cast<int64_t>(words)) << ext.out;
  EXPECT_EQ(field(sl.out, "XmtDataSL0"), static_cast<int64_t>(words)) << sl.out;
  // RC ACKs came back on the same port: the receive side counts them, not the data.
  EXPECT_GT(field(base.out, "PortRcvPkts"), 0) << base.out;
}

}  // namespace
}  // namespace ibemu::testing
