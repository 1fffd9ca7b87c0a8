// DDBBM's notification packet on InfiniBand: a GS MAD from QP1 to QP1, vendor class 0x0E
// (vendor range 1, no OUI), method Send, attribute DdbbmNotice. The paper proposes VL15 [D:L131],
// but VL15 carries subnet management packets only, so the notice travels as a GMP on a data VL,
// as a CA's management agent would send it.
#pragma once
#include <cstdint>

namespace ibemu::cc::dbbm {

constexpr uint8_t kNoticeMgmtClass = 0x0E;
constexpr uint16_t kNoticeAttrId = 0xFF10;

// Fills a 256-byte MAD: `lid` (the destination that detected) is congested or no longer.
void EncodeNotice(uint8_t* mad, uint64_t tid, uint16_t lid, bool congested);
// True if `mad` is a notice; then sets *lid and *congested.
bool DecodeNotice(const uint8_t* mad, uint16_t* lid, bool* congested);

}  // namespace ibemu::cc::dbbm
