// Must-show 6 of the verbs host library: two RC flows from unmodified verbs programs
// (ib_write_bw, 64 KiB RDMA WRITEs) into one host with IB CC on, run by
// scripts/verbs-cc-experiment.sh on configs/scenarios/verbs-cc-two-flows.yaml at pace 0.002
// (2 ms bins). H2 -> H1 starts alone; H4 -> H1 joins 10 ms of virtual time later. The switch
// marks at its output to H1, H1 returns BECNs on its ACKs, both senders' CCTI rises from 0, and
// their throughputs converge to halves of what H1 takes (13 Gbit/s).
// docs/experiments/verbs-ib-cc.md has the full run and the comparison with CC off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/integration/up_fabric.h"

namespace ibemu::testing {
namespace {

// A CSV file as columns by header name.
std::map<std::string, std::vector<double>> ReadColumns(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> cols;
  if (!std::getline(in, line)) return cols;
  std::stringstream h(line);
  for (std::string c; std::getline(h, c, ',');) names.push_back(c);
  while (std::getline(in, line)) {
    std::stringstream r(line);
    std::string c;
    for (size_t i = 0; i < names.size() && std::getline(r, c, ','); ++i)
      cols[names[i]].push_back(c == "NaN" ? NAN : std::stod(c));
  }
  return cols;
}

// The value in column `col` of ports.csv for the row of device `dev`, port `port`.
std::string PortField(const std::string& path, const std::string& dev, int port,
                      const std::string& col) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  std::stringstream h(line);
  for (std::string c; std::getline(h, c, ',');) names.push_back(c);
  size_t k = std::find(names.begin(), names.end(), col) - names.begin();
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream r(line);
    for (std::string c; std::getline(r, c, ',');) f.push_back(c);
    if (f.size() > k && f[0] == dev && f[1] == std::to_string(port)) return f[k];
  }
  return "";
}

double Mean(const std::vector<double>& v, size_t from, size_t to) {
  double s = 0;
  for (size_t i = from; i < to; ++i) s += v[i];
  return to > from ? s / static_cast<double>(to - from) : 0;
}

TEST(VerbsCc, TwoRcFlowsIntoOneHostAreMarkedThrottledAndShareFairly) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "sanitizer build: the Debian tools cannot load an instrumented libibverbs";
#endif
  if (!HaveTool("ib_write_bw")) GTEST_SKIP() << "perftest is not installed";
  TempDir tmp("verbs-cc");
  std::string out = tmp.path() + "/results";
  std::string build = fs::path(IBEMU_BINARY).parent_path().parent_path().string();
  CliResult r =
      Shell("IBEMU_BUILD_DIR=" + build + " timeout 300 " + Src("scripts/verbs-cc-experiment.sh") +
            " " + Src("configs/scenarios/verbs-cc-two-flows.yaml") + " " + out + " 0.002");
  ASSERT_EQ(r.status, 0) << r.out;

  auto cols = ReadColumns(out + "/flows.csv");
  const std::vector<double>& t = cols["time_ms"];
  const std::vector<double>& a = cols["H2.qp400000_rx_gbps"];
  const std::vector<double>& b = cols["H4.qp400000_rx_gbps"];
  const std::vector<double>& ca = cols["H2.qp400000_ccti"];
  const std::vector<double>& cb = cols["H4.qp400000_ccti"];
  ASSERT_FALSE(t.empty()) << ReadFile(out + "/flows.csv");
  ASSERT_TRUE(a.size() == t.size() && b.size() == t.size() && ca.size() == t.size() &&
              cb.size() == t.size())
      << "a flow or a CCTI column is missing:\n"
      << ReadFile(out + "/flows.csv");

  // Where each flow starts delivering, and the second's last bin.
  size_t a0 = 0, b0 = 0, b1 = 0;
  while (a0 < a.size() && a[a0] == 0) ++a0;
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i] > 0) {
      if (!b0) b0 = i;
      b1 = i;
    }
  ASSERT_GT(b0, a0 + 2) << "the second flow never delivered, or not 10 ms after the first";
  // 2 ms bins: the first flow alone (after its first bin) has H1's 13 Gbit/s, unthrottled.
  EXPECT_NEAR(Mean(a, a0 + 1, b0), 13.0, 0.5);
  for (size_t i = 0; i < b0; ++i)
    if (!std::isnan(ca[i])) {
      EXPECT_EQ(ca[i], 0) << "at " << t[i] << " ms";
    }

  // Both throttled once they meet: each CCTI rises well above 0.
  double top_a = 0, top_b = 0;
  for (size_t i = b0; i <= b1; ++i) {
    if (!std::isnan(ca[i])) top_a = std::max(top_a, ca[i]);
    if (!std::isnan(cb[i])) top_b = std::max(top_b, cb[i]);
  }
  EXPECT_GT(top_a, 20);
  EXPECT_GT(top_b, 20);

  // From 10 ms after the second flow starts until its last 4 ms: a fair share each (within
  // 15 % of each other), H1's 13 Gbit/s between them (within 10 %).
  size_t from = b0 + 5, to = b1 - 1;
  ASSERT_GT(to, from + 5) << "too little time with both flows";
  double ma = Mean(a, from, to), mb = Mean(b, from, to);
  EXPECT_NEAR(ma / mb, 1.0, 0.15) << ma << " and " << mb << " Gbit/s";
  EXPECT_NEAR(ma + mb, 13.0, 1.3);

  // S1 marked FECN on its output to H1, and H1 sent as many BECNs back on its ACKs.
  std::string ports = out + "/ports.csv";
  long fecn = std::stol(PortField(ports, "S1", 1, "tx_fecn"));
  long becn = std::stol(PortField(ports, "H1", 1, "tx_becn"));
  EXPECT_GT(fecn, 50);
  EXPECT_EQ(becn, fecn);
  EXPECT_TRUE(fs::exists(out + "/ccti.png") || !HaveTool("gnuplot"));
}

}  // namespace
}  // namespace ibemu::testing
