// Link widths and speeds (common/link/link_rate.h): data rates after line coding and exact
// integer serialisation times.
#include "common/link/link_rate.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace ibemu::link {
namespace {

TEST(LinkRate, DataRatesAfterLineCoding) {
  EXPECT_EQ(LinkRate(Width::k1x, Speed::kSDR).data_bps(), 2'000'000'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kSDR).data_bps(), 8'000'000'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kDDR).data_bps(), 16'000'000'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).data_bps(), 32'000'000'000);
  EXPECT_EQ(LinkRate(Width::k8x, Speed::kQDR).data_bps(), 64'000'000'000);
  EXPECT_EQ(LinkRate(Width::k12x, Speed::kQDR).data_bps(), 96'000'000'000);
  // FDR: 14.0625 Gbaud x 4 x 64/66 = 54.5454... Gbit/s, rounded down.
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kFDR).data_bps(), 54'545'454'545);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kEDR).data_bps(), 100'000'000'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kHDR).data_bps(), 200'000'000'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kNDR).data_bps(), 400'000'000'000);
}

TEST(LinkRate, SerializationTimesOf2048BytesAreExact) {
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).SerializationTime(2048), 512'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kDDR).SerializationTime(2048), 1'024'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kSDR).SerializationTime(2048), 2'048'000);
  EXPECT_EQ(LinkRate(Width::k1x, Speed::kSDR).SerializationTime(2048), 8'192'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kEDR).SerializationTime(2048), 163'840);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kHDR).SerializationTime(2048), 81'920);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kNDR).SerializationTime(2048), 40'960);
}

TEST(LinkRate, FdrSerializationIsRoundedUpFromTheExact64b66bRational) {
  const LinkRate fdr(Width::k4x, Speed::kFDR);
  // 2048 B: 16384 bits * 66 / (14.0625e9 * 4 * 64) s = 300373.33 ps -> 300374.
  EXPECT_EQ(fdr.SerializationTime(2048), 300'374);
  // 66 B: 528 bits -> exactly 9680 ps, no rounding.
  EXPECT_EQ(fdr.SerializationTime(66), 9'680);
  // 1 B: 146.67 ps -> 147.
  EXPECT_EQ(fdr.SerializationTime(1), 147);
  // Rounding once over the whole transfer, not per byte.
  EXPECT_EQ(fdr.SerializationTime(3), 440);  // 440.0 exactly
  EXPECT_LT(fdr.SerializationTime(3000), 3000 * fdr.SerializationTime(1));
}

TEST(LinkRate, OddRatesRoundUpToAWholePicosecond) {
  // 12x QDR: 16384 bits / 96 Gbit/s = 170666.67 ps.
  EXPECT_EQ(LinkRate(Width::k12x, Speed::kQDR).SerializationTime(2048), 170'667);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).SerializationTime(1), 250);
  EXPECT_EQ(LinkRate(Width::k1x, Speed::kSDR).SerializationTime(1), 4'000);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).SerializationTime(0), 0);
}

// The whole-picoseconds-per-byte path (no division) must give what the rational gives, and be
// taken only where it is exact: every width and speed, every packet size, against a reference
// computed here in 128 bits.
TEST(LinkRate, PerByteFastPathMatchesTheRationalForEverySpeedAndWidth) {
  const Width widths[] = {Width::k1x, Width::k4x, Width::k8x, Width::k12x};
  const Speed speeds[] = {Speed::kSDR, Speed::kDDR, Speed::kQDR, Speed::kFDR,
                          Speed::kEDR, Speed::kHDR, Speed::kNDR};
  int whole = 0;
  for (Width w : widths)
    for (Speed sp : speeds) {
      const LinkRate r(w, sp);
      const SpeedInfo& i = Info(sp);
      __int128 den = static_cast<__int128>(i.lane_baud) * static_cast<int>(w) * i.enc_data;
      __int128 per_byte = static_cast<__int128>(8) * kPsPerSec * i.enc_total;
      EXPECT_EQ(r.ps_per_byte() != 0, per_byte % den == 0) << r.ToString();
      if (r.ps_per_byte() != 0) ++whole;
      for (int64_t bytes = 0; bytes <= 8192; ++bytes) {
        __int128 num = per_byte * bytes;
        SimTime want = static_cast<SimTime>((num + den - 1) / den);
        ASSERT_EQ(r.SerializationTime(bytes), want) << r.ToString() << " " << bytes << " B";
      }
    }
  // 4x QDR (250 ps a byte), the default, must be among them or the fast path is never taken.
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).ps_per_byte(), 250);
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kFDR).ps_per_byte(), 0);
  // Whole everywhere but FDR (64b/66b) and 12x: 28 rates less FDR's 4 and the other 6 at 12x.
  EXPECT_EQ(whole, 18);
}

TEST(LinkRate, LargeTransfersDoNotOverflow) {
  // 1 GiB at 4x QDR: 2^33 bits / 32e9 = 0.268435456 s.
  EXPECT_EQ(LinkRate(Width::k4x, Speed::kQDR).SerializationTime(int64_t{1} << 30), 268'435'456'000);
  // 1 TiB at 1x SDR: 2^43 bits / 2e9 = 4398.046511104 s.
  EXPECT_EQ(LinkRate(Width::k1x, Speed::kSDR).SerializationTime(int64_t{1} << 40),
            4'398'046'511'104'000);
}

TEST(LinkRate, DefaultIs4xQdrAndPrintsWidthThenSpeed) {
  LinkRate r;
  EXPECT_EQ(r.width(), Width::k4x);
  EXPECT_EQ(r.speed(), Speed::kQDR);
  EXPECT_EQ(r.ToString(), "4x QDR");
  EXPECT_EQ(LinkRate(Width::k12x, Speed::kFDR).ToString(), "12x FDR");
  EXPECT_EQ(LinkRate(Width::k1x, Speed::kSDR).ToString(), "1x SDR");
}

TEST(LinkRate, SpeedTableEncodings) {
  EXPECT_EQ(Info(Speed::kSDR).enc_data * 10, Info(Speed::kSDR).enc_total * 8);
  EXPECT_EQ(Info(Speed::kQDR).lane_baud, 10'000'000'000);
  EXPECT_EQ(Info(Speed::kFDR).enc_data, 64);
  EXPECT_EQ(Info(Speed::kFDR).enc_total, 66);
  EXPECT_EQ(Info(Speed::kFDR).lane_baud, 14'062'500'000);
  EXPECT_EQ(Info(Speed::kEDR).lane_baud, 25'781'250'000);
  EXPECT_EQ(std::string(Info(Speed::kNDR).name), "NDR");
}

TEST(ParseWidth, AcceptsTheFourIbaWidthsWithOrWithoutX) {
  EXPECT_EQ(ParseWidth("1x"), Width::k1x);
  EXPECT_EQ(ParseWidth("1X"), Width::k1x);
  EXPECT_EQ(ParseWidth("1"), Width::k1x);
  EXPECT_EQ(ParseWidth("4x"), Width::k4x);
  EXPECT_EQ(ParseWidth("4X"), Width::k4x);
  EXPECT_EQ(ParseWidth("4"), Width::k4x);
  EXPECT_EQ(ParseWidth("8x"), Width::k8x);
  EXPECT_EQ(ParseWidth("12x"), Width::k12x);
  EXPECT_EQ(ParseWidth("12X"), Width::k12x);
  EXPECT_EQ(ParseWidth("12"), Width::k12x);
}

TEST(ParseWidth, RejectsOtherWidthsAndMalformedText) {
  for (const char* bad :
       {"", "x", "X", "2x", "16x", "0x", "4xx", " 4x", "4x ", "x4", "04", "-4", "4.0", "four"})
    EXPECT_FALSE(ParseWidth(bad).has_value()) << '"' << bad << '"';
}

TEST(ParseWidth, ToStringRoundTrips) {
  for (Width w : {Width::k1x, Width::k4x, Width::k8x, Width::k12x})
    EXPECT_EQ(ParseWidth(ToString(w)), w) << ToString(w);
  EXPECT_EQ(ToString(Width::k12x), "12x");
}

TEST(ParseSpeed, AcceptsEveryNameInAnyCase) {
  EXPECT_EQ(ParseSpeed("SDR"), Speed::kSDR);
  EXPECT_EQ(ParseSpeed("ddr"), Speed::kDDR);
  EXPECT_EQ(ParseSpeed("Qdr"), Speed::kQDR);
  EXPECT_EQ(ParseSpeed("fDR"), Speed::kFDR);
  EXPECT_EQ(ParseSpeed("EDR"), Speed::kEDR);
  EXPECT_EQ(ParseSpeed("hdr"), Speed::kHDR);
  EXPECT_EQ(ParseSpeed("NDR"), Speed::kNDR);
}

TEST(ParseSpeed, RejectsUnknownOrPaddedNames) {
  for (const char* bad : {"", "QDR ", " QDR", "XDR", "FDR10", "QD", "QDRR", "10G"})
    EXPECT_FALSE(ParseSpeed(bad).has_value()) << '"' << bad << '"';
}

TEST(ByteRate, ZeroOrNegativeMeansUnlimited) {
  EXPECT_EQ(ByteRate{0}.Time(1'000'000), 0);
  EXPECT_EQ(ByteRate{-5}.Time(1'000'000), 0);
}

TEST(ByteRate, TimeIsBitsOverRateRoundedUp) {
  EXPECT_EQ(ByteRate{8'000'000'000}.Time(1), 1'000);
  EXPECT_EQ(ByteRate{8'000'000'000}.Time(4096), 4'096'000);
  // 8e12 / 3 = 2666666666666.67 ps -> ...667.
  EXPECT_EQ(ByteRate{3}.Time(1), 2'666'666'666'667);
  // 25.6 Gbit/s PCIe-like cap: 2048 B = 640 ns exactly.
  EXPECT_EQ(ByteRate{25'600'000'000}.Time(2048), 640'000);
  EXPECT_EQ(ByteRate{25'600'000'000}.Time(0), 0);
}

TEST(PropagationDelay, IsFiveNanosecondsPerMetre) {
  EXPECT_EQ(PropagationDelay(0.0), 0);
  EXPECT_EQ(PropagationDelay(2.0), 10'000);
  EXPECT_EQ(PropagationDelay(100.0), 500'000);
  EXPECT_EQ(PropagationDelay(0.3), 1'500);
}

}  // namespace
}  // namespace ibemu::link
