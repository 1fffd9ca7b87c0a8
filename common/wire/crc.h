// The two packet CRCs of IBA vol. 1, 7.8: the invariant CRC (ICRC, end to end) and the variant CRC
// (VCRC, recomputed per hop), and the link packet CRC (LPCRC) of flow-control packets.
#pragma once
#include <cstddef>
#include <cstdint>

namespace ibemu::wire {

// ICRC: CRC-32 (polynomial 0x04C11DB7, as Ethernet) over the packet from the LRH to the end of the
// payload, with the fields that switches may change (LRH VL, BTH byte 4 holding FECN/BECN) taken
// as all ones, so that marking or re-laning a packet keeps its ICRC valid.
uint32_t icrc(const uint8_t* pkt, size_t len_without_crcs);

// CRC-16 with polynomial 0x100B and seed 0xFFFF: the VCRC over LRH..ICRC, and the LPCRC over the
// first four bytes of a link packet.
uint16_t crc16_ib(const uint8_t* data, size_t len);

}  // namespace ibemu::wire
