// Must-show 1 of the verbs host library: Debian's ibv_devices and ibv_devinfo, unmodified, under
// `ibemu exec --hca <node>` on a fabric that is up, list the emulated HCA with its attributes, and
// ibstat (through our libibumad) agrees on the GUIDs and the LID the subnet manager gave.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

class VerbsDevices : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibverbs";
#endif
    if (!HaveTool("ibv_devinfo") || !HaveTool("ibstat"))
      GTEST_SKIP() << "ibverbs-utils and infiniband-diags are not installed "
                      "(scripts/install-deps.sh)";
  }
};

// "key: value" lines of ibv_devinfo and ibstat, tabs and all.
std::string Field(const std::string& out, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("\\n\\s*" + key + ":\\s*([^\\n]*)"))) return "";
  return m[1];
}

TEST_F(VerbsDevices, IbvDevinfoListsTheHcaAndIbstatAgrees) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  std::map<std::string, std::string> lids;
  for (std::string hca : {"H1", "H3"}) {
    SCOPED_TRACE(hca);
    CliResult devices = f.ExecOnHca(hca, "ibv_devices");
    ASSERT_EQ(devices.status, 0) << devices.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(devices.out, m, std::regex("mlx5_0\\s+([0-9a-f]{16})")))
        << devices.out;
    std::string guid = m[1];

    CliResult info = f.ExecOnHca(hca, "ibv_devinfo -v");
    ASSERT_EQ(info.status, 0) << info.out;
    CliResult stat = f.ExecOnHca(hca, "ibstat");
    ASSERT_EQ(stat.status, 0) << stat.out;
    EXPECT_NE(stat.out.find("CA 'mlx5_0'"), std::string::npos) << stat.out;

    // The node GUID three ways: ibv_devices, ibv_devinfo's sysfs-style one, ibstat's.
    std::string colons = guid.substr(0, 4) + ":" + guid.substr(4, 4) + ":" + guid.substr(8, 4) +
                         ":" + guid.substr(12, 4);
    EXPECT_EQ(Field(info.out, "node_guid"), colons);
    EXPECT_EQ(Field(stat.out, "Node GUID"), "0x" + guid);
    EXPECT_EQ(Field(info.out, "fw_ver"), Field(stat.out, "Firmware version"));
    EXPECT_EQ(Field(info.out, "vendor_id"), "0x02c9");
    EXPECT_EQ(Field(info.out, "vendor_part_id"), "4119");
    EXPECT_EQ(Field(info.out, "phys_port_cnt"), "1");
    EXPECT_EQ(Field(info.out, "atomic_cap"), "ATOMIC_HCA (1)");

    // The port: Active with the LID the built-in SM gave, as ibstat reads it.
    EXPECT_EQ(Field(info.out, "state"), "PORT_ACTIVE (4)");
    EXPECT_EQ(Field(info.out, "phys_state"), "LINK_UP (5)");
    std::string lid = Field(info.out, "port_lid");
    EXPECT_NE(lid, "0");
    EXPECT_EQ(lid, Field(stat.out, "Base lid"));
    EXPECT_EQ(Field(info.out, "port_cap_flags"),
              "0x" + Field(stat.out, "Capability mask").substr(2));
    // The test bed's hosts are 4x DDR (20 Gb/s), 2048-byte MTU.
    EXPECT_EQ(Field(info.out, "active_width"), "4X (2)");
    EXPECT_EQ(Field(info.out, "active_speed"), "5.0 Gbps (2)");
    EXPECT_EQ(Field(stat.out, "Rate"), "20");
    EXPECT_EQ(Field(info.out, "active_mtu"), "2048 (4)");
    EXPECT_EQ(Field(info.out, "link_layer"), "InfiniBand");
    // GID 0: the default subnet prefix and the port GUID ibstat shows.
    std::string port_guid = Field(stat.out, "Port GUID").substr(2);
    std::string gid = "fe80:0000:0000:0000:" + port_guid.substr(0, 4) + ":" +
                      port_guid.substr(4, 4) + ":" + port_guid.substr(8, 4) + ":" +
                      port_guid.substr(12, 4);
    EXPECT_NE(info.out.find("GID[  0]:\t\t" + gid), std::string::npos) << info.out;
    lids[hca] = lid;

    // The sysfs tree is real files: ibv_get_sysfs_path() (asked through ctypes, as no tool
    // prints it) names the node's tree, and plain `cat` reads there the LID ibstat shows.
    if (!HaveTool("python3")) continue;
    CliResult root = f.ExecOnHca(
        hca,
        "python3 -c \"import ctypes; v = ctypes.CDLL('libibverbs.so.1'); "
        "v.ibv_get_sysfs_path.restype = ctypes.c_char_p; print(v.ibv_get_sysfs_path().decode())\"");
    ASSERT_EQ(root.status, 0) << root.out;
    std::string sysfs = root.out.substr(0, root.out.find('\n'));
    EXPECT_EQ(sysfs, f.dir() + "/sysfs/" + f.name() + "/" + hca);
    CliResult cat = f.ExecOnHca(hca, "cat " + sysfs + "/class/infiniband/mlx5_0/ports/1/lid");
    ASSERT_EQ(cat.status, 0) << cat.out;
    EXPECT_EQ(std::stoi(cat.out, nullptr, 16), std::stoi(lid)) << cat.out;
  }
  EXPECT_NE(lids["H1"], lids["H3"]) << "each process sees its own HCA";
}

TEST_F(VerbsDevices, ASwitchOrAMissingFabricIsNoDeviceWithTheReason) {
  UpFabric f(Src("configs/topologies/testbed.topo"), {});
  ASSERT_TRUE(f.ready());
  CliResult sw = f.ExecOnHca("S1", "ibv_devinfo");
  EXPECT_NE(sw.status, 0);
  EXPECT_NE(sw.out.find("No IB devices found"), std::string::npos) << sw.out;
  EXPECT_NE(sw.out.find("node 'S1' is a switch"), std::string::npos) << sw.out;
  f.Down();
  CliResult gone = f.ExecOnHca("H1", "ibv_devices");
  EXPECT_NE(gone.out.find("no fabric named '" + f.name() + "' is up"), std::string::npos)
      << gone.out;
}

}  // namespace
}  // namespace ibemu::testing
