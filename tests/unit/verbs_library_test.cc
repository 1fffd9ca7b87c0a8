// hostlib/verbs without a fabric: the enum strings and rate conversions against the system's
// rdma-core libibverbs (loaded privately with dlopen, when installed), and the fabric's
// description of an HCA as ibv_port_attr, GIDs, sysfs files and the sysfs tree.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <infiniband/sa.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "hostlib/verbs/attributes.h"
#include "hostlib/verbs/device.h"
#include "hostlib/verbs/qp_state.h"
#include "hostlib/verbs/sysfs.h"
#include "hostlib/verbs/sysfs_tree.h"

// rdma-core's driver.h, which Debian does not install.
extern "C" const char* ibv_get_sysfs_path();
extern "C" int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size);
// marshall.h, also not installed.
extern "C" void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src);
extern "C" void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src);
extern "C" void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src);
extern "C" void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src);

namespace ibemu::verbs {
namespace {

// The process stands behind node H1 of fabric "unit" in a run directory of its own, set before
// main so the library's first look at the environment sees it: its sysfs tree is made there. No
// fabric is up, so the device's description comes from the tests (AdoptDescription).
struct TestRunDir {
  std::string path;
  TestRunDir() {
    char tmpl[] = "/tmp/ibemu-verbs-test-XXXXXX";
    if (!mkdtemp(tmpl)) std::abort();
    path = tmpl;
    setenv("IBEMU_RUN_DIR", path.c_str(), 1);
    setenv("IBEMU_FABRIC", "unit", 1);
    setenv("IBEMU_VERBS_HCA", "H1", 1);
  }
  ~TestRunDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
const TestRunDir& RunDir() {
  static TestRunDir dir;
  return dir;
}
[[maybe_unused]] const TestRunDir& kRunDirBeforeMain = RunDir();

// A file's bytes as a program reads them with open and read, or "<errno name>".
std::string PlainRead(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::string("<") + strerrorname_np(errno) + ">";
  std::string s;
  char b[256];
  for (ssize_t n; (n = read(fd, b, sizeof b)) > 0;) s.append(b, static_cast<size_t>(n));
  close(fd);
  return s;
}

// What ibv_read_sysfs_file returns for root-relative `rel`, or "<-1>".
std::string ReaderRead(const std::string& rel) {
  std::string path = std::string(ibv_get_sysfs_path()) + "/" + rel;
  auto slash = path.rfind('/');
  char buf[128];
  int n =
      ibv_read_sysfs_file(path.substr(0, slash).c_str(), path.c_str() + slash + 1, buf, sizeof buf);
  return n < 0 ? "<-1>" : std::string(buf, static_cast<size_t>(n));
}

class AgainstRdmaCore : public ::testing::Test {
 protected:
  void SetUp() override {
    real_ = dlopen("/usr/lib/x86_64-linux-gnu/libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!real_) GTEST_SKIP() << "no system libibverbs.so.1 to compare with (libibverbs1)";
  }
  void TearDown() override {
    if (real_) dlclose(real_);
  }
  template <typename F>
  F Real(const char* name) {
    auto f = reinterpret_cast<F>(dlsym(real_, name));
    EXPECT_NE(f, nullptr) << name;
    return f;
  }
  void* real_ = nullptr;
};

TEST_F(AgainstRdmaCore, EveryEnumStringIsTheSame) {
  auto node = Real<const char* (*)(int)>("ibv_node_type_str");
  auto port = Real<const char* (*)(int)>("ibv_port_state_str");
  auto event = Real<const char* (*)(int)>("ibv_event_type_str");
  auto wc = Real<const char* (*)(int)>("ibv_wc_status_str");
  for (int v = -2; v < 40; ++v) {
    EXPECT_STREQ(ibv_node_type_str(static_cast<ibv_node_type>(v)), node(v)) << v;
    EXPECT_STREQ(ibv_port_state_str(static_cast<ibv_port_state>(v)), port(v)) << v;
    EXPECT_STREQ(ibv_event_type_str(static_cast<ibv_event_type>(v)), event(v)) << v;
    EXPECT_STREQ(ibv_wc_status_str(static_cast<ibv_wc_status>(v)), wc(v)) << v;
  }
}

TEST_F(AgainstRdmaCore, EveryRateConversionIsTheSame) {
  auto to_mult = Real<int (*)(int)>("ibv_rate_to_mult");
  auto from_mult = Real<int (*)(int)>("mult_to_ibv_rate");
  auto to_mbps = Real<int (*)(int)>("ibv_rate_to_mbps");
  auto from_mbps = Real<int (*)(int)>("mbps_to_ibv_rate");
  for (int v = -1; v < 40; ++v) {
    EXPECT_EQ(ibv_rate_to_mult(static_cast<ibv_rate>(v)), to_mult(v)) << v;
    EXPECT_EQ(ibv_rate_to_mbps(static_cast<ibv_rate>(v)), to_mbps(v)) << v;
  }
  for (int m = -1; m < 100; ++m) EXPECT_EQ(mult_to_ibv_rate(m), from_mult(m)) << m;
  for (int v = 0; v < 40; ++v) {
    int mbps = to_mbps(v);
    EXPECT_EQ(mbps_to_ibv_rate(mbps), from_mbps(mbps)) << mbps;
    EXPECT_EQ(mbps_to_ibv_rate(mbps + 1), from_mbps(mbps + 1)) << mbps + 1;
  }
}

umad::CaAttributes TestCa() {
  umad::CaAttributes ca;
  ca.set_ca_name("mlx5_0");
  ca.set_node_type(1);
  ca.set_num_ports(1);
  ca.set_node_guid(0x0002c90300000300ull);
  ca.set_system_guid(0x0002c90300000300ull);
  ca.set_fw_ver("16.35.1012");
  ca.set_vendor_id(0x2c9);
  ca.set_device_id(4119);
  umad::PortAttributes* p = ca.add_ports();
  p->set_port(1);
  p->set_lid(0x1a);
  p->set_sm_lid(0x2);
  p->set_state(4);
  p->set_phys_state(5);
  p->set_link_width_active(2);  // 4x
  p->set_link_speed_active(4);  // QDR
  p->set_mtu_cap(5);
  p->set_neighbor_mtu(4);
  p->set_vl_cap(4);
  p->set_capmask(0x02514868);
  p->set_gid_prefix(0xFE80000000000000ull);
  p->set_port_guid(0x0002c90300000301ull);
  p->set_guid_cap(8);
  for (uint32_t k : {0xFFFFu, 0x8001u}) p->add_pkeys(k);
  return ca;
}

// The kernel-structure converters give what the system's give, from the same bytes (a pattern
// that makes every field distinct; the destinations start equal, so padding compares too).
template <typename Dst, typename Src>
void ExpectSameCopy(void (*ours)(Dst*, Src*), void (*theirs)(Dst*, Src*), Src* src) {
  Dst a, b;
  std::memset(&a, 0xee, sizeof a);
  std::memset(&b, 0xee, sizeof b);
  ours(&a, src);
  theirs(&b, src);
  EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0);
}

template <typename T>
T Pattern() {
  T v;
  for (size_t i = 0; i < sizeof v; ++i)
    reinterpret_cast<uint8_t*>(&v)[i] = static_cast<uint8_t>(i * 7 + 1);
  return v;
}

TEST_F(AgainstRdmaCore, TheKernelStructureConvertersCopyAsTheSystemsDo) {
  using QpFn = void (*)(ibv_qp_attr*, ib_uverbs_qp_attr*);
  using AhFn = void (*)(ibv_ah_attr*, ib_uverbs_ah_attr*);
  using FromFn = void (*)(ibv_sa_path_rec*, ib_user_path_rec*);
  using ToFn = void (*)(ib_user_path_rec*, ibv_sa_path_rec*);
  auto kqp = Pattern<ib_uverbs_qp_attr>();
  ExpectSameCopy(&ibv_copy_qp_attr_from_kern, Real<QpFn>("ibv_copy_qp_attr_from_kern"), &kqp);
  auto kah = Pattern<ib_uverbs_ah_attr>();
  ExpectSameCopy(&ibv_copy_ah_attr_from_kern, Real<AhFn>("ibv_copy_ah_attr_from_kern"), &kah);
  auto kpath = Pattern<ib_user_path_rec>();
  ExpectSameCopy(&ibv_copy_path_rec_from_kern, Real<FromFn>("ibv_copy_path_rec_from_kern"), &kpath);
  ibv_sa_path_rec path;
  ibv_copy_path_rec_from_kern(&path, &kpath);
  ExpectSameCopy(&ibv_copy_path_rec_to_kern, Real<ToFn>("ibv_copy_path_rec_to_kern"), &path);
}

TEST(VerbsAttributes, PortAttributesInVerbsEncodings) {
  umad::CaAttributes ca = TestCa();
  ibv_port_attr a;
  std::memset(&a, 0xAB, sizeof a);
  FillPortAttr(ca.ports(0), &a, sizeof a);
  EXPECT_EQ(a.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(a.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(a.active_mtu, IBV_MTU_2048);
  EXPECT_EQ(a.lid, 0x1a);
  EXPECT_EQ(a.sm_lid, 0x2);
  EXPECT_EQ(a.max_vl_num, 4);
  EXPECT_EQ(a.active_width, 2);
  EXPECT_EQ(a.active_speed, 4);
  EXPECT_EQ(a.gid_tbl_len, 8);
  EXPECT_EQ(a.pkey_tbl_len, 2);
  EXPECT_EQ(a.port_cap_flags, 0x02514868u);
  EXPECT_EQ(a.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_EQ(a.flags, 0);
  // An extended speed wins: EDR is 32 in enum ibv's active_speed.
  ca.mutable_ports(0)->set_link_speed_ext_active(2);
  FillPortAttr(ca.ports(0), &a, sizeof a);
  EXPECT_EQ(a.active_speed, 32);
  // A caller with the older, shorter struct gets no byte beyond it.
  std::memset(&a, 0xAB, sizeof a);
  FillPortAttr(ca.ports(0), &a, offsetof(ibv_port_attr, flags));
  EXPECT_EQ(a.flags, 0xAB);
  EXPECT_EQ(a.link_layer, IBV_LINK_LAYER_INFINIBAND);
}

TEST(VerbsAttributes, GidZeroIsPrefixAndPortGuidInNetworkOrder) {
  umad::CaAttributes ca = TestCa();
  ibv_gid g;
  ASSERT_TRUE(PortGid(ca.ports(0), 0, &g));
  const uint8_t want[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0, 0, 0x03, 0x01};
  EXPECT_EQ(std::memcmp(g.raw, want, 16), 0);
  ASSERT_TRUE(PortGid(ca.ports(0), 7, &g));  // inside GUIDCap: empty
  EXPECT_EQ(g.global.interface_id, 0u);
  EXPECT_FALSE(PortGid(ca.ports(0), 8, &g));
  EXPECT_FALSE(PortGid(ca.ports(0), -1, &g));
}

TEST(VerbsSysfs, TheDevicesFilesAsTheKernelWritesThem) {
  umad::CaAttributes ca = TestCa();
  std::string dev = IbdevPath("mlx5_0");
  EXPECT_EQ(dev, SysfsRoot() + "/class/infiniband/mlx5_0");
  EXPECT_EQ(SysfsFile(ca, dev, "node_guid"), "0002:c903:0000:0300\n");
  EXPECT_EQ(SysfsFile(ca, dev + "/", "node_type"), "1: CA\n");
  EXPECT_EQ(SysfsFile(ca, dev, "fw_ver"), "16.35.1012\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/lid"), "0x1a\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/state"), "4: ACTIVE\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/phys_state"), "5: LinkUp\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/rate"), "40 Gb/sec (4X QDR)\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/cap_mask"), "0x02514868\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/gids/0"), "fe80:0000:0000:0000:0002:c903:0000:0301\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/pkeys/1"), "0x8001\n");
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/pkeys/2"), std::nullopt);
  EXPECT_EQ(SysfsFile(ca, dev, "ports/2/lid"), std::nullopt);
  EXPECT_EQ(SysfsFile(ca, dev, "ports/01/lid"), std::nullopt);
  EXPECT_EQ(SysfsFile(ca, UverbsPath(kUverbsName), "ibdev"), "mlx5_0\n");
  EXPECT_EQ(SysfsFile(ca, "/etc", "hostname"), std::nullopt);
  ca.mutable_ports(0)->set_link_speed_ext_active(2);
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/rate"), "100 Gb/sec (4X EDR)\n");
  ca.mutable_ports(0)->set_link_speed_ext_active(0);
  ca.mutable_ports(0)->set_link_width_active(1);
  ca.mutable_ports(0)->set_link_speed_active(1);
  EXPECT_EQ(SysfsFile(ca, dev, "ports/1/rate"), "2.5 Gb/sec (1X)\n");
}

TEST(VerbsSysfs, ReadSysfsFileDropsTheNewlineAndRefusesToTruncate) {
  // A file of the host, through the exported reader: the newline goes, and a buffer that cannot
  // hold the contents and the NUL is an error, as in rdma-core.
  char buf[64];
  int n = ibv_read_sysfs_file("/proc/sys/kernel", "ostype", buf, sizeof buf);
  ASSERT_EQ(n, 5);
  EXPECT_STREQ(buf, "Linux");
  char small[3];
  EXPECT_EQ(ibv_read_sysfs_file("/proc/sys/kernel", "ostype", small, sizeof small), -1);
  EXPECT_EQ(ibv_read_sysfs_file("/nonexistent", "x", buf, sizeof buf), -1);
}

TEST(VerbsSysfsTree, EveryFileIsOneTheReaderServesWithTheSameBytes) {
  umad::CaAttributes ca = TestCa();
  auto files = SysfsFiles(ca);
  // 3 of uverbs, 8 of the device, 9 of the port, GUIDCap 8 GIDs, 2 P_Keys.
  EXPECT_EQ(files.size(), 30u);
  for (const auto& [rel, contents] : files) {
    auto slash = rel.rfind('/');
    EXPECT_EQ(SysfsFile(ca, SysfsRoot() + "/" + rel.substr(0, slash), rel.substr(slash + 1)),
              contents)
        << rel;
  }
  EXPECT_EQ(files.front().first, "class/infiniband_verbs/abi_version");
  EXPECT_EQ(files.back().first, "class/infiniband/mlx5_0/ports/1/pkeys/1");
}

TEST(VerbsSysfsTree, PlainReadsOfTheTreeSeeWhatTheReaderReturnsFresh) {
  // ibv_get_sysfs_path() is the tree: <run dir>/sysfs/<fabric>/<node>, private to the user.
  const std::string root = ibv_get_sysfs_path();
  ASSERT_EQ(root, RunDir().path + "/sysfs/unit/H1");
  for (const std::string& dir : {RunDir().path + "/sysfs", RunDir().path + "/sysfs/unit", root}) {
    struct stat st;
    ASSERT_EQ(lstat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << dir;
  }
  umad::CaAttributes ca = TestCa();
  AdoptDescription(ca);  // what every query that reaches the fabric does
  const std::string lid = "class/infiniband/mlx5_0/ports/1/lid";
  EXPECT_EQ(PlainRead(root + "/" + lid), "0x1a\n");
  EXPECT_EQ(ReaderRead(lid), "0x1a");
  for (const auto& [rel, contents] : SysfsFiles(ca)) {
    EXPECT_EQ(PlainRead(root + "/" + rel), contents) << rel;
    EXPECT_EQ(ReaderRead(rel) + "\n", contents) << rel;
  }
  EXPECT_EQ(PlainRead(root + "/class/infiniband_verbs/uverbs0/ibdev"), "mlx5_0\n");

  // The SM moves the port: the next description rewrites the files that changed.
  ca.mutable_ports(0)->set_lid(0x2b);
  ca.mutable_ports(0)->set_sm_lid(0x7);
  ca.mutable_ports(0)->set_state(2);
  AdoptDescription(ca);
  EXPECT_EQ(PlainRead(root + "/" + lid), "0x2b\n");
  EXPECT_EQ(ReaderRead(lid), "0x2b");
  EXPECT_EQ(PlainRead(root + "/class/infiniband/mlx5_0/ports/1/sm_lid"), "0x7\n");
  EXPECT_EQ(PlainRead(root + "/class/infiniband/mlx5_0/ports/1/state"), "2: INIT\n");

  // What the description no longer has goes, with what others left behind: a port of an earlier
  // fabric, and the temporary file of a writer that died before its rename.
  std::filesystem::create_directories(root + "/class/infiniband/mlx5_0/ports/2");
  std::ofstream(root + "/class/infiniband/mlx5_0/ports/2/lid") << "0x5\n";
  pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  const std::string stale =
      root + "/class/infiniband/mlx5_0/ports/1/.lid.tmp." + std::to_string(dead);
  std::ofstream(stale) << "0x";
  ca.mutable_ports(0)->clear_pkeys();
  ca.mutable_ports(0)->add_pkeys(0xFFFF);
  AdoptDescription(ca);
  EXPECT_EQ(PlainRead(root + "/class/infiniband/mlx5_0/ports/1/pkeys/0"), "0xffff\n");
  EXPECT_EQ(PlainRead(root + "/class/infiniband/mlx5_0/ports/1/pkeys/1"), "<ENOENT>");
  EXPECT_EQ(ReaderRead("class/infiniband/mlx5_0/ports/1/pkeys/1"), "<-1>");
  EXPECT_FALSE(std::filesystem::exists(root + "/class/infiniband/mlx5_0/ports/2"));
  EXPECT_FALSE(std::filesystem::exists(stale));
  // Every write was a rename: no temporary file of ours is left.
  for (const auto& e : std::filesystem::recursive_directory_iterator(root))
    EXPECT_NE(e.path().filename().string()[0], '.') << e.path();

  // A tree someone removed is written again whole at the next description.
  std::filesystem::remove_all(root + "/class");
  AdoptDescription(ca);
  EXPECT_EQ(PlainRead(root + "/" + lid), "0x2b\n");
  EXPECT_EQ(PlainRead(root + "/class/infiniband/mlx5_0/node_guid"), "0002:c903:0000:0300\n");
}

TEST(VerbsSysfsTree, ADirectoryThatCannotBeMadeIsRefusedWithTheReason) {
  const std::string base = RunDir().path + "/refuse";
  std::filesystem::create_directories(base);
  std::string why;
  // Node names become one escaped path component, never "..": a name cannot climb out.
  transport::RunDir ok{base + "/run", "IBEMU_RUN_DIR"};
  EXPECT_EQ(PrepareSysfsTree(ok, "f", "../x y", &why), base + "/run/sysfs/f/%2e.%2fx%20y") << why;
  EXPECT_EQ(why, "");
  // A run directory under a plain file cannot be made.
  std::ofstream(base + "/file") << "x";
  transport::RunDir under_file{base + "/file/run", "IBEMU_RUN_DIR"};
  EXPECT_EQ(PrepareSysfsTree(under_file, "f", "H1", &why), "");
  EXPECT_NE(why.find(base + "/file"), std::string::npos) << why;
  // A planted symbolic link is not followed.
  std::filesystem::create_directories(base + "/run2");
  chmod((base + "/run2").c_str(), 0700);
  std::filesystem::create_directory_symlink(base + "/run", base + "/run2/sysfs");
  transport::RunDir planted{base + "/run2", "IBEMU_RUN_DIR"};
  EXPECT_EQ(PrepareSysfsTree(planted, "f", "H1", &why), "");
  EXPECT_NE(why.find("symbolic link"), std::string::npos) << why;
  // A tree whose files cannot be written says so and goes on.
  SysfsTree nowhere(base + "/file/tree");
  nowhere.Write(TestCa());
  nowhere.Write(TestCa());
  EXPECT_TRUE(nowhere.Contains(base + "/file/tree/class"));
  EXPECT_FALSE(nowhere.Contains(base + "/file/treehouse"));
}

// The kernel's qp_state_table, as ib_modify_qp_is_ok applies it (docs in qp_state.h).
TEST(QpStateMachine, TransitionsAndAttributeMasksAsTheKernelChecksThem) {
  ibv_qp_attr a{};
  auto to = [&](ibv_qp_state s) {
    a.qp_state = s;
    return &a;
  };
  constexpr int kS = IBV_QP_STATE;
  constexpr int kInit = kS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
  constexpr int kRtr = kS | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  constexpr int kRts = kS | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                       IBV_QP_MAX_QP_RD_ATOMIC;
  // ibv_rc_pingpong's three steps are accepted...
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RESET, *to(IBV_QPS_INIT), kInit), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_INIT, *to(IBV_QPS_RTR), kRtr), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTR, *to(IBV_QPS_RTS), kRts), 0);
  // ... and each with one required attribute missing is not.
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RESET, *to(IBV_QPS_INIT), kInit & ~IBV_QP_PORT),
            EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_INIT, *to(IBV_QPS_RTR), kRtr & ~IBV_QP_MIN_RNR_TIMER),
            EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTR, *to(IBV_QPS_RTS), kRts & ~IBV_QP_TIMEOUT), EINVAL);
  // UC needs no RNR timer, atomics or timeouts; UD wants the Q_Key at Init, not access flags.
  EXPECT_EQ(CheckModify(IBV_QPT_UC, IBV_QPS_INIT, *to(IBV_QPS_RTR),
                        kS | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
            0);
  EXPECT_EQ(CheckModify(IBV_QPT_UC, IBV_QPS_INIT, *to(IBV_QPS_RTR), kRtr), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_UC, IBV_QPS_RTR, *to(IBV_QPS_RTS), kS | IBV_QP_SQ_PSN), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_UD, IBV_QPS_RESET, *to(IBV_QPS_INIT),
                        kS | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
            0);
  EXPECT_EQ(CheckModify(IBV_QPT_UD, IBV_QPS_RESET, *to(IBV_QPS_INIT), kInit), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_UD, IBV_QPS_INIT, *to(IBV_QPS_RTR), kS), 0);
  // Skipping a state, going back, and Reset to Error are refused; Error and Reset from anywhere
  // else are allowed with nothing but the state.
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RESET, *to(IBV_QPS_RTR), kRtr), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_RTR), kS), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RESET, *to(IBV_QPS_ERR), kS), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_ERR), kS), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_ERR, *to(IBV_QPS_RESET), kS), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_ERR, *to(IBV_QPS_RTS), kS), EINVAL);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_ERR), kS | IBV_QP_PORT), EINVAL);
  // An attribute the transition does not take is refused, one it may take is not.
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_RTS), kS | IBV_QP_MIN_RNR_TIMER), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_RTS), kS | IBV_QP_DEST_QPN), EINVAL);
  // CUR_STATE: only from RTR, RTS, SQD or SQE, and the claim is what is checked.
  a.cur_qp_state = IBV_QPS_RTS;
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_RTS), kS | IBV_QP_CUR_STATE), 0);
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_INIT, *to(IBV_QPS_INIT), kS | IBV_QP_CUR_STATE),
            EINVAL);
  a.cur_qp_state = IBV_QPS_INIT;
  EXPECT_EQ(CheckModify(IBV_QPT_RC, IBV_QPS_RTS, *to(IBV_QPS_RTS), kS | IBV_QP_CUR_STATE), EINVAL);
}

}  // namespace
}  // namespace ibemu::verbs
