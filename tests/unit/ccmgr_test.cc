// ibemu-ccmgr's parts that need no fabric: the policy (YAML and opensm.conf, with overrides and
// the errors that name file, line and key), the CCT generators against the thesis's table, and
// the CongestionLog as the manager decodes it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "cc-manager/cc_mads.h"
#include "cc-manager/cct_generator.h"
#include "cc-manager/policy.h"
#include "common/mad/gs_attributes.h"
#include "common/mad/opensm_cc_options.h"

namespace ibemu::ccmgr {
namespace {

std::string Src(const std::string& rel) {
  return std::string(IBEMU_SOURCE_DIR) + "/" + rel;
}

// The message LoadPolicy refuses `file` with, or "" if it loads.
std::string Refusal(const std::string& file) {
  try {
    LoadPolicy(file);
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "";
}

TEST(CcmgrCct, TheQuadraticGeneratorGivesPaperIIIsTableEntryForEntry) {
  // The table the test-bed scenario lists, CCT[i] = 7 us * i^2 / 106^2 in ns.
  mad::CcSettings listed;
  std::string cct;
  {
    std::ifstream in(Src("configs/scenarios/testbed-scenario1-cc-on.yaml"));
    for (std::string line; std::getline(in, line);)
      if (line.find("cc_cct: \"") != std::string::npos)
        cct = line.substr(line.find('"') + 1, line.rfind('"') - line.find('"') - 1);
  }
  ASSERT_FALSE(cct.empty());
  mad::SetCcOption("cc_cct", cct, &listed);
  ASSERT_EQ(listed.cct.size(), 128u);
  CctGenerator g{"quadratic", 128, 0, 7000, 106};
  EXPECT_EQ(GenerateCct(g), listed.cct);
}

TEST(CcmgrCct, LinearRisesEvenlyWithTheShiftInTheTopBits) {
  std::vector<uint16_t> t = GenerateCct({"linear", 5, 2, 100, -1});
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0], 2u << 14 | 0u);
  EXPECT_EQ(t[1], 2u << 14 | 25u);
  EXPECT_EQ(t[4], 2u << 14 | 100u);
  // Past `at`, a quadratic table keeps rising, capped at the 14-bit multiplier.
  std::vector<uint16_t> q = GenerateCct({"quadratic", 128, 0, 16000, 64});
  EXPECT_EQ(q[127] & 0x3FFF, 0x3FFF);
  EXPECT_THROW(GenerateCct({"linear", 129, 0, 1, -1}), std::invalid_argument);
  EXPECT_THROW(GenerateCct({"linear", 8, 4, 1, -1}), std::invalid_argument);
}

TEST(CcmgrPolicy, TheYamlPolicyGivesEachNodeTheFabricWideOptionsWithItsOwnOnTop) {
  CcPolicy p = LoadPolicy(Src("configs/ccmgr/paper3.yaml"));
  EXPECT_EQ(p.cc_key, 0xc0ffeu);
  EXPECT_TRUE(p.manage_key);
  EXPECT_TRUE(p.key_protect);
  mad::CcSettings s1 = p.For("S1", 0x2c90200000100), s2 = p.For("S2", 0x2c90200000200);
  EXPECT_EQ(s1.sw.victim_mask[31], 0x0e);
  EXPECT_EQ(s2.sw.victim_mask[31], 0x1e);
  EXPECT_EQ(s1.sw.threshold, 15);
  EXPECT_EQ(s1.sw.control_map, 0x1du);
  EXPECT_EQ(s2.ca.sl[0].ccti_timer, 150);
  EXPECT_EQ(s2.ca.sl[0].ccti_increase, 1);
  EXPECT_EQ(s2.ca.control_map, 1);
  EXPECT_EQ(s2.cct.size(), 128u);
  EXPECT_EQ(s2.cct[106], 7000u);
  // A node named by GUID takes its options too; an unnamed one the fabric-wide ones.
  p.node_options["0x0002c90300000300"].push_back({"cc_ca_cong_setting_ccti_timer", 0, "300"});
  EXPECT_EQ(p.For("H1", 0x2c90300000300).ca.sl[0].ccti_timer, 300);
  EXPECT_EQ(p.For("H2", 0x2c90300000400).ca.sl[0].ccti_timer, 150);
}

TEST(CcmgrPolicy, AnOpenSmConfIsReadAsOpenSmReadsItsCcSection) {
  CcPolicy p = LoadPolicy(Src("configs/ccmgr/opensm-cc.conf"));
  mad::CcSettings s = p.For("S2", 1);
  EXPECT_EQ(s.sw.control_map, 0x1du);
  EXPECT_EQ(s.sw.victim_mask[31], 0x1e);
  EXPECT_EQ(s.sw.threshold, 15);
  EXPECT_EQ(s.sw.packet_size, 8);
  EXPECT_EQ(s.sw.marking_rate, 1);
  EXPECT_EQ(s.ca.control_map, 1);
  EXPECT_EQ(s.ca.sl[0].ccti_timer, 150);
  EXPECT_EQ(s.cct.size(), 16u);
  EXPECT_EQ(s.cct[15], 140u);
  EXPECT_EQ(p.max_outstanding_mads, 500);
  EXPECT_FALSE(p.manage_key);  // OpenSM only presents cc_key; it never writes one
}

TEST(CcmgrPolicy, ALiveChangeIsCheckedAndAppliesToTheNodeItNames) {
  CcPolicy p = LoadPolicy(Src("configs/ccmgr/paper3.yaml"));
  p.SetOption("S2", {"cc_sw_cong_setting_threshold", -1, "0"});
  EXPECT_EQ(p.For("S2", 0).sw.threshold, 0);
  EXPECT_EQ(p.For("S1", 0).sw.threshold, 15);
  p.SetOption("", {"cc_sw_cong_setting_marking_rate", -1, "7"});
  EXPECT_EQ(p.For("S2", 0).sw.marking_rate, 7);
  EXPECT_THROW(p.SetOption("", {"cc_sw_cong_setting_threshold", -1, "16"}), PolicyError);
  EXPECT_THROW(p.SetOption("", {"cc_ca_cong_setting_ccti_timer", -1, "5"}), PolicyError);
  EXPECT_THROW(p.SetOption("", {"cc_ca_cong_setting_ccti_min", 0, "200"}), PolicyError);
  p.SetPortOption("S2", 3, "threshold", "7");
  EXPECT_TRUE(p.PortFor("S2", 0, 3).valid);
  EXPECT_EQ(p.PortFor("S2", 0, 3).threshold, 7);
  EXPECT_FALSE(p.PortFor("S2", 0, 2).valid);
  EXPECT_THROW(p.SetPortOption("S2", 3, "thresh", "7"), PolicyError);
}

TEST(CcmgrPolicy, BadPoliciesAreRefusedNamingFileLineAndKey) {
  const std::string d = Src("tests/data/ccmgr/");
  EXPECT_EQ(Refusal(d + "unknown_key.yaml"), d + "unknown_key.yaml:3: cc_threshold: unknown key");
  EXPECT_EQ(Refusal(d + "out_of_range.yaml"),
            d + "out_of_range.yaml:3: cc_sw_cong_setting_threshold: 16 is out of range (0..15)");
  EXPECT_EQ(Refusal(d + "typo.conf"),
            d + "typo.conf:5: cc_sw_cong_setting_treshold: not a congestion-control option of "
                "OpenSM");
  EXPECT_EQ(Refusal(d + "bad_sl.conf"),
            d + "bad_sl.conf:2: cc_ca_cong_setting_ccti_timer: 17 is out of range (0..15)");
  EXPECT_EQ(Refusal(d + "ccti_min_beyond.yaml"),
            d + "ccti_min_beyond.yaml:2: cc_ca_cong_setting_ccti_min of SL 0 is 20, beyond "
                "CCTI_Limit 15 of cc_cct");
  EXPECT_EQ(Refusal(d + "bad_generator.yaml"),
            d + "bad_generator.yaml:1: cct.generator: 'cubic' is not linear or quadratic");
  EXPECT_EQ(Refusal(d + "missing.yaml"), d + "missing.yaml: cannot be read");
  // yaml-cpp's own refusals (a key that is a list) come out as the policy's, with the place.
  EXPECT_EQ(Refusal(d + "list_key.yaml").rfind(d + "list_key.yaml:2: ", 0), 0u)
      << Refusal(d + "list_key.yaml");
}

TEST(CcmgrLog, ASwitchLogIsReadWithItsCounterPortMapAndEntriesNewestFirst) {
  using namespace mad::congestion_log;
  mad::MadBuffer m{};
  uint8_t* log = m.data() + mad::kCcLogDataOffset;
  mad::Set(log, kLogType, kLogTypeSwitch);
  mad::Set(log, kLogEventsCounter, 0xFFFE);
  mad::Set(log, kSwitchCurrentTimeStamp, 5000);
  log[kPortMap.byte + 31] = 0x04;  // port 2
  for (int i = 0; i < 2; ++i) {
    uint8_t* x = log + kSwitchEntriesOffset + i * kSwitchEntryBytes;
    mad::Set(x, kEntrySlid, 9);
    mad::Set(x, kEntryDlid, 7);
    mad::Set(x, kEntrySl, 3);
    mad::Set(x, kEntryTimestamp, 4000 - i);
  }
  CongestionLogRead r = DecodeCongestionLog(m);
  EXPECT_TRUE(r.is_switch);
  EXPECT_EQ(r.counter, 0xFFFE);
  EXPECT_EQ(r.now, 5000u);
  EXPECT_EQ(r.port_map, std::vector<int>{2});
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].timestamp, 4000u);
  EXPECT_EQ(r.entries[1].sl, 3);
  EXPECT_EQ(r.entries[1].dlid, 7);
}

}  // namespace
}  // namespace ibemu::ccmgr
