// The MAD library against Debian's libibmad: every field we describe must sit exactly where
// libibmad puts it, under the name libibmad gives it, both ways (we encode, libibmad decodes; and
// the reverse), on random buffers so that a field one bit off or one bit too wide shows up.
#include <gtest/gtest.h>
#include <infiniband/mad.h>

#include <array>
#include <random>
#include <string>
#include <vector>

#include "common/mad/attribute_table.h"
#include "common/mad/gs_attributes.h"
#include "common/mad/mad_header.h"
#include "common/mad/smp_attributes.h"

namespace ibemu::mad {
namespace {

struct Pair {
  const Field* ours;
  MAD_FIELDS theirs;
  int base;  // MAD byte the attribute starts at
  bool check_name = true;
};

std::vector<Pair> Pairs() {
  std::vector<Pair> p = {
      {&hdr::kBaseVersion, IB_MAD_BASEVER_F, 0},
      {&hdr::kMgmtClass, IB_MAD_MGMTCLASS_F, 0},
      {&hdr::kClassVersion, IB_MAD_CLASSVER_F, 0},
      {&hdr::kIsResponse, IB_MAD_RESPONSE_F, 0},
      {&hdr::kMethod, IB_MAD_METHOD_F, 0},
      {&hdr::kStatus, IB_MAD_STATUS_F, 0},
      {&hdr::kTid, IB_MAD_TRID_F, 0},
      {&hdr::kAttrId, IB_MAD_ATTRID_F, 0},
      {&hdr::kAttrMod, IB_MAD_ATTRMOD_F, 0},
      {&hdr::kMKey, IB_MAD_MKEY_F, 0},
      {&hdr::kDrDirection, IB_DRSMP_DIRECTION_F, 0},
      {&hdr::kDrStatus, IB_DRSMP_STATUS_F, 0},
      {&hdr::kDrHopPtr, IB_DRSMP_HOPPTR_F, 0},
      {&hdr::kDrHopCnt, IB_DRSMP_HOPCNT_F, 0},
      {&hdr::kDrSlid, IB_DRSMP_DRSLID_F, 0},
      {&hdr::kDrDlid, IB_DRSMP_DRDLID_F, 0},
      {&hdr::kDrInitialPath, IB_DRSMP_PATH_F, 0},
      {&hdr::kDrReturnPath, IB_DRSMP_RPATH_F, 0},
      {&hdr::kCcKey, IB_CC_CCKEY_F, 0},
      {&hdr::kVendorOui, IB_VEND2_OUI_F, 0},
  };
  auto add = [&](std::span<const Field* const> ours, MAD_FIELDS first, int base) {
    for (size_t i = 0; i < ours.size(); ++i)
      p.push_back({ours[i], static_cast<MAD_FIELDS>(first + static_cast<int>(i)), base});
  };
  add(node_info::kAll, IB_NODE_BASE_VERS_F, kSmpDataOffset);
  p.push_back({&node_description::kText, IB_NODE_DESC_F, kSmpDataOffset});
  add(port_info::kAll, IB_PORT_MKEY_F, kSmpDataOffset);
  // libibmad numbers the PortInfo fields after CapabilityMask2 out of order (added later).
  p.erase(p.end() - 4, p.end());
  p.push_back({&port_info::kCapabilityMask2, IB_PORT_CAPMASK2_F, kSmpDataOffset});
  p.push_back({&port_info::kLinkSpeedExtActive, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, kSmpDataOffset});
  p.push_back(
      {&port_info::kLinkSpeedExtSupported, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, kSmpDataOffset});
  p.push_back({&port_info::kLinkSpeedExtEnabled, IB_PORT_LINK_SPEED_EXT_ENABLED_F, kSmpDataOffset});
  add(switch_info::kAll, IB_SW_LINEAR_FDB_CAP_F, kSmpDataOffset);
  p.push_back({&guid_info::kGuid0, IB_GUID_GUID0_F, kSmpDataOffset});
  p.push_back({&sl2vl_table::kTable, IB_SLTOVL_MAPPING_TABLE_F, kSmpDataOffset});
  p.push_back({&vlarb_table::kTable, IB_VL_ARBITRATION_TABLE_F, kSmpDataOffset});
  p.push_back({&lft::kBlock, IB_LINEAR_FORW_TBL_F, kSmpDataOffset});
  p.push_back({&mft::kBlock, IB_MULTICAST_FORW_TBL_F, kSmpDataOffset});
  add(sm_info::kAll, IB_SMINFO_GUID_F, kSmpDataOffset);
  add(notice::kAll, IB_NOTICE_IS_GENERIC_F, kSmpDataOffset);
  p.push_back({&notice::kDataLid, IB_NOTICE_DATA_LID_F, kSmpDataOffset});
  p.push_back({&notice::kData144Lid, IB_NOTICE_DATA_144_LID_F, kSmpDataOffset});
  p.push_back({&notice::kData144CapMask, IB_NOTICE_DATA_144_CAPMASK_F, kSmpDataOffset});
  add(class_port_info::kAll, IB_CPI_BASEVER_F, kGsDataOffset);
  add(std::span(port_counters::kAll).first(15), IB_PC_PORT_SELECT_F, kGsDataOffset);
  // libibmad places VL15Dropped after the error counters and before the data counters, in order.
  add(std::span(port_counters::kAll).subspan(15), IB_PC_XMT_BYTES_F, kGsDataOffset);
  p.push_back({&port_counters_ext::kPortSelect, IB_PC_EXT_PORT_SELECT_F, kGsDataOffset});
  p.push_back({&port_counters_ext::kCounterSelect, IB_PC_EXT_COUNTER_SELECT_F, kGsDataOffset});
  p.push_back({&port_counters_ext::kCounterSelect2, IB_PC_EXT_COUNTER_SELECT2_F, kGsDataOffset});
  add(std::span(port_counters_ext::kAll).subspan(3, 8), IB_PC_EXT_XMT_BYTES_F, kGsDataOffset);
  add(std::span(port_counters_ext::kAll).subspan(11), IB_PC_EXT_ERR_SYM_F, kGsDataOffset);
  for (int sl = 0; sl < 16; ++sl) {
    static std::vector<Field> sls;  // stable addresses for the pairs
    if (sls.empty())
      for (int i = 0; i < 16; ++i) sls.push_back(port_data_sl::Sl(i));
    p.push_back(
        {&sls[sl], static_cast<MAD_FIELDS>(IB_PC_XMT_DATA_SL0_F + sl), kGsDataOffset, false});
    p.push_back(
        {&sls[sl], static_cast<MAD_FIELDS>(IB_PC_RCV_DATA_SL0_F + sl), kGsDataOffset, false});
  }
  add(congestion_info::kAll, IB_CC_CONGESTION_INFO_F, kGsDataOffset);
  add(congestion_key_info::kAll, IB_CC_CONGESTION_KEY_INFO_CC_KEY_F, kGsDataOffset);
  using namespace congestion_log;
  p.push_back({&kLogType, IB_CC_CONGESTION_LOG_LOGTYPE_F, kCcLogDataOffset});
  p.push_back({&kCongestionFlags, IB_CC_CONGESTION_LOG_CONGESTION_FLAGS_F, kCcLogDataOffset});
  p.push_back(
      {&kLogEventsCounter, IB_CC_CONGESTION_LOG_SWITCH_LOG_EVENTS_COUNTER_F, kCcLogDataOffset});
  p.push_back({&kSwitchCurrentTimeStamp, IB_CC_CONGESTION_LOG_SWITCH_CURRENT_TIME_STAMP_F,
               kCcLogDataOffset});
  p.push_back({&kPortMap, IB_CC_CONGESTION_LOG_SWITCH_PORTMAP_F, kCcLogDataOffset});
  p.push_back({&kEntrySlid, IB_CC_CONGESTION_LOG_ENTRY_SWITCH_SLID_F, 0});
  p.push_back({&kEntryDlid, IB_CC_CONGESTION_LOG_ENTRY_SWITCH_DLID_F, 0});
  p.push_back({&kEntrySl, IB_CC_CONGESTION_LOG_ENTRY_SWITCH_SL_F, 0});
  p.push_back({&kEntryTimestamp, IB_CC_CONGESTION_LOG_ENTRY_SWITCH_TIMESTAMP_F, 0});
  p.push_back({&kThresholdEventCounter, IB_CC_CONGESTION_LOG_CA_THRESHOLD_EVENT_COUNTER_F,
               kCcLogDataOffset});
  p.push_back({&kThresholdCongestionEventMap,
               IB_CC_CONGESTION_LOG_CA_THRESHOLD_CONGESTION_EVENT_MAP_F, kCcLogDataOffset});
  p.push_back(
      {&kCaCurrentTimeStamp, IB_CC_CONGESTION_LOG_CA_CURRENT_TIMESTAMP_F, kCcLogDataOffset});
  p.push_back({&kCaEntryLocalQp, IB_CC_CONGESTION_LOG_ENTRY_CA_LOCAL_QP_CN_ENTRY_F, 0});
  p.push_back({&kCaEntrySl, IB_CC_CONGESTION_LOG_ENTRY_CA_SL_CN_ENTRY_F, 0});
  p.push_back({&kCaEntryServiceType, IB_CC_CONGESTION_LOG_ENTRY_CA_SERVICE_TYPE_CN_ENTRY_F, 0});
  p.push_back({&kCaEntryRemoteQp, IB_CC_CONGESTION_LOG_ENTRY_CA_REMOTE_QP_NUMBER_CN_ENTRY_F, 0});
  p.push_back({&kCaEntryLocalLid, IB_CC_CONGESTION_LOG_ENTRY_CA_LOCAL_LID_CN_F, 0});
  p.push_back({&kCaEntryRemoteLid, IB_CC_CONGESTION_LOG_ENTRY_CA_REMOTE_LID_CN_ENTRY_F, 0});
  p.push_back({&kCaEntryTimestamp, IB_CC_CONGESTION_LOG_ENTRY_CA_TIMESTAMP_CN_ENTRY_F, 0});
  add(switch_congestion_setting::kAll, IB_CC_SWITCH_CONGESTION_SETTING_CONTROL_MAP_F,
      kGsDataOffset);
  add(switch_port_congestion_setting::kAll, IB_CC_SWITCH_PORT_CONGESTION_SETTING_ELEMENT_VALID_F,
      0);
  p.push_back({&ca_congestion_setting::kPortControl, IB_CC_CA_CONGESTION_SETTING_PORT_CONTROL_F,
               kGsDataOffset});
  p.push_back({&ca_congestion_setting::kControlMap, IB_CC_CA_CONGESTION_SETTING_CONTROL_MAP_F,
               kGsDataOffset});
  add(ca_congestion_setting::kEntry, IB_CC_CA_CONGESTION_ENTRY_CCTI_TIMER_F, 0);
  p.push_back({&congestion_control_table::kCctiLimit, IB_CC_CONGESTION_CONTROL_TABLE_CCTI_LIMIT_F,
               kGsDataOffset});
  p.push_back(
      {&congestion_control_table::kCctShift, IB_CC_CONGESTION_CONTROL_TABLE_ENTRY_CCT_SHIFT_F, 0});
  p.push_back({&congestion_control_table::kCctMultiplier,
               IB_CC_CONGESTION_CONTROL_TABLE_ENTRY_CCT_MULTIPLIER_F, 0});
  p.push_back({&timestamp::kTimestamp, IB_CC_TIMESTAMP_F, kGsDataOffset});
  return p;
}

std::string Describe(const Pair& p) {
  return std::string(p.ours->name) + " vs " + mad_field_name(p.theirs);
}

TEST(MadCodec, EveryFieldHasLibibmadsName) {
  for (const Pair& p : Pairs()) {
    if (!p.check_name) continue;
    EXPECT_EQ(std::string(p.ours->name), mad_field_name(p.theirs)) << Describe(p);
  }
}

TEST(MadCodec, LibibmadDecodesWhatWeEncode) {
  std::mt19937_64 rng(7);
  for (const Pair& p : Pairs()) {
    for (int trial = 0; trial < 8; ++trial) {
      MadBuffer ours{}, theirs{};
      for (auto& b : ours) b = static_cast<uint8_t>(rng());
      theirs = ours;
      if (p.ours->bits > 64) {
        std::vector<uint8_t> v(p.ours->bits / 8);
        for (auto& b : v) b = static_cast<uint8_t>(rng());
        std::copy(v.begin(), v.end(), Bytes(ours.data() + p.base, *p.ours).begin());
        mad_set_array(theirs.data(), p.base, p.theirs, v.data());
      } else {
        uint64_t v = rng();
        Set(ours.data() + p.base, *p.ours, v);
        if (p.ours->bits > 32)
          mad_set_field64(theirs.data(), p.base, p.theirs, v);
        else
          mad_set_field(theirs.data(), p.base, p.theirs,
                        static_cast<uint32_t>(v & ((uint64_t{1} << p.ours->bits) - 1)));
      }
      // Same bytes everywhere: the field's bits and nothing else changed.
      ASSERT_EQ(ours, theirs) << Describe(p);
    }
  }
}

TEST(MadCodec, WeDecodeWhatLibibmadEncodes) {
  std::mt19937_64 rng(11);
  for (const Pair& p : Pairs()) {
    if (p.ours->bits > 64) continue;  // byte runs: covered by the test above
    MadBuffer buf{};
    for (auto& b : buf) b = static_cast<uint8_t>(rng());
    uint64_t want = p.ours->bits > 32 ? mad_get_field64(buf.data(), p.base, p.theirs)
                                      : mad_get_field(buf.data(), p.base, p.theirs);
    EXPECT_EQ(Get(buf.data() + p.base, *p.ours), want) << Describe(p);
  }
}

TEST(MadCodec, Sl2VlNibblesAndVlArbEntries) {
  MadBuffer buf{};
  uint8_t* d = buf.data() + kSmpDataOffset;
  for (int sl = 0; sl < 16; ++sl) Set(d, sl2vl_table::VlOfSl(sl), (15 - sl) & 0xF);
  EXPECT_EQ(d[0], 0xFE);  // SL0 -> VL15 (high nibble), SL1 -> VL14
  EXPECT_EQ(d[7], 0x10);
  buf = {};
  Set(d, vlarb_table::Vl(3), 5);
  Set(d, vlarb_table::Weight(3), 200);
  EXPECT_EQ(d[6], 0x05);
  EXPECT_EQ(d[7], 200);
}

// Every shape a field can take (start bit 0-7, 1-64 bits wide), against a bit-by-bit reading of
// the spec's numbering: the inline byte, 16, 32 and 64-bit paths and the in-one-byte path must
// agree with the general one and leave the bits around the field alone.
TEST(MadCodec, EveryFieldShapeReadsAndWritesOnlyItsBits) {
  auto bit_at = [](const uint8_t* b, uint32_t i) { return (b[i / 8] >> (7 - i % 8)) & 1u; };
  std::mt19937_64 rng(7);
  for (uint8_t bit = 0; bit < 8; ++bit) {
    for (uint16_t bits = 1; bits <= 64; ++bits) {
      const Field f{"shape", 3, bit, bits};
      std::array<uint8_t, 16> buf, before;
      for (auto& b : buf) b = static_cast<uint8_t>(rng());
      uint64_t want = 0;
      for (uint32_t i = 0; i < bits; ++i) want = want << 1 | bit_at(buf.data(), 24 + bit + i);
      ASSERT_EQ(Get(buf.data(), f), want) << "bit " << int{bit} << " bits " << bits;
      before = buf;
      uint64_t v = rng();
      Set(buf.data(), f, v);
      for (uint32_t i = 0; i < buf.size() * 8; ++i) {
        uint32_t in_field = i - (24 + bit);
        unsigned expect =
            in_field < bits ? (v >> (bits - 1 - in_field)) & 1u : bit_at(before.data(), i);
        ASSERT_EQ(bit_at(buf.data(), i), expect)
            << "bit " << int{bit} << " bits " << bits << " buffer bit " << i;
      }
    }
  }
}

TEST(MadCodec, DescribePrintsFieldsByName) {
  MadBuffer buf{};
  buf[0] = 1;
  buf[1] = mgmt_class::kSubnLid;
  buf[2] = 1;
  buf[3] = method::kGetResp;
  buf[17] = attr::kNodeInfo;
  Set(buf.data() + kSmpDataOffset, node_info::kNodeType, node_info::kTypeSwitch);
  Set(buf.data() + kSmpDataOffset, node_info::kNodeGuid, 0x0002c90300001234ull);
  std::string s = DescribeMad(buf.data());
  EXPECT_NE(s.find("-- NodeInfo"), std::string::npos) << s;
  EXPECT_NE(s.find("NodeType:"), std::string::npos) << s;
  EXPECT_NE(s.find("0x0002c90300001234"), std::string::npos) << s;
  EXPECT_EQ(FindAttribute(mgmt_class::kSubnDirected, attr::kPortInfo)->name,
            std::string("PortInfo"));
  EXPECT_EQ(FindAttribute(mgmt_class::kPerf, 0x7777), nullptr);
}

}  // namespace
}  // namespace ibemu::mad
