#include "emulator/cc/dbbm/notice_mad.h"

#include <algorithm>

#include "common/mad/mad_header.h"

namespace ibemu::cc::dbbm {

namespace {
constexpr uint8_t kMethodSend = 0x03;
constexpr int kLidOffset = mad::kGsDataOffset;
}  // namespace

void EncodeNotice(uint8_t* mad, uint64_t tid, uint16_t lid, bool congested) {
  std::fill(mad, mad + 256, uint8_t{0});
  mad::Set(mad, mad::hdr::kBaseVersion, 1);
  mad[1] = kNoticeMgmtClass;
  mad[2] = 1;  // class version
  mad[3] = kMethodSend;
  mad::Set(mad, mad::hdr::kTid, tid);
  mad::Set(mad, mad::hdr::kAttrId, kNoticeAttrId);
  mad::Set(mad, mad::hdr::kAttrMod, congested ? 1 : 0);
  mad[kLidOffset] = static_cast<uint8_t>(lid >> 8);
  mad[kLidOffset + 1] = static_cast<uint8_t>(lid);
}

bool DecodeNotice(const uint8_t* mad, uint16_t* lid, bool* congested) {
  if (mad[1] != kNoticeMgmtClass || mad[3] != kMethodSend ||
      mad::Get(mad, mad::hdr::kAttrId) != kNoticeAttrId)
    return false;
  *lid = static_cast<uint16_t>(mad[kLidOffset] << 8 | mad[kLidOffset + 1]);
  *congested = mad::Get(mad, mad::hdr::kAttrMod) != 0;
  return true;
}

}  // namespace ibemu::cc::dbbm
