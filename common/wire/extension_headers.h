// The BTH's extension headers (IBA vol. 1, 9.3), as views over packet bytes like Bth: DETH for
// datagrams, RETH for RDMA, AtomicETH and AtomicAckETH for atomics, AETH for acknowledgements,
// ImmDt and IETH. All fields big-endian.
#pragma once
#include <cstdint>

namespace ibemu::wire {

namespace be {
inline uint64_t Get(const uint8_t* b, int n) {
  uint64_t v = 0;
  for (int k = 0; k < n; ++k) v = v << 8 | b[k];
  return v;
}
inline void Put(uint8_t* b, int n, uint64_t v) {
  for (int k = n - 1; k >= 0; --k, v >>= 8) b[k] = static_cast<uint8_t>(v);
}
}  // namespace be

// Datagram Extended Transport Header (9.3.2): Q_Key, then the source QP in the low 24 bits.
struct Deth {
  uint8_t* b;
  uint32_t qkey() const { return static_cast<uint32_t>(be::Get(b, 4)); }
  uint32_t src_qp() const { return static_cast<uint32_t>(be::Get(b + 5, 3)); }
  void set_qkey(uint32_t v) { be::Put(b, 4, v); }
  void set_src_qp(uint32_t v) {
    b[4] = 0;
    be::Put(b + 5, 3, v);
  }
};

// RDMA Extended Transport Header (9.3.3): virtual address, R_Key, DMA length.
struct Reth {
  uint8_t* b;
  uint64_t va() const { return be::Get(b, 8); }
  uint32_t rkey() const { return static_cast<uint32_t>(be::Get(b + 8, 4)); }
  uint32_t dma_length() const { return static_cast<uint32_t>(be::Get(b + 12, 4)); }
  void set_va(uint64_t v) { be::Put(b, 8, v); }
  void set_rkey(uint32_t v) { be::Put(b + 8, 4, v); }
  void set_dma_length(uint32_t v) { be::Put(b + 12, 4, v); }
};

// Atomic Extended Transport Header (9.3.4): address, R_Key, swap (or add) and compare data.
struct AtomicEth {
  uint8_t* b;
  uint64_t va() const { return be::Get(b, 8); }
  uint32_t rkey() const { return static_cast<uint32_t>(be::Get(b + 8, 4)); }
  uint64_t swap_add() const { return be::Get(b + 12, 8); }
  uint64_t compare() const { return be::Get(b + 20, 8); }
  void set_va(uint64_t v) { be::Put(b, 8, v); }
  void set_rkey(uint32_t v) { be::Put(b + 8, 4, v); }
  void set_swap_add(uint64_t v) { be::Put(b + 12, 8, v); }
  void set_compare(uint64_t v) { be::Put(b + 20, 8, v); }
};

// ACK Extended Transport Header (9.3.5): an 8-bit syndrome and the 24-bit MSN.
struct Aeth {
  uint8_t* b;
  uint8_t syndrome() const { return b[0]; }
  uint32_t msn() const { return static_cast<uint32_t>(be::Get(b + 1, 3)); }
  void set_syndrome(uint8_t v) { b[0] = v; }
  void set_msn(uint32_t v) { be::Put(b + 1, 3, v); }
};

// The syndrome (table 42): bits 6-5 say what it is, bits 4-0 the credit count of an ACK, the
// timer of an RNR NAK, or the code of a NAK.
namespace aeth {
constexpr uint8_t kAck = 0x00;
constexpr uint8_t kRnrNak = 0x20;
constexpr uint8_t kNak = 0x60;
constexpr uint8_t kKindMask = 0x60;
constexpr uint8_t kValueMask = 0x1F;
// NAK codes (table 43).
constexpr uint8_t kPsnSequenceError = 0;
constexpr uint8_t kInvalidRequest = 1;
constexpr uint8_t kRemoteAccessError = 2;
constexpr uint8_t kRemoteOperationalError = 3;
constexpr uint8_t kInvalidRdRequest = 4;
// An ACK whose responder does not advertise end-to-end credits (9.7.7.2).
constexpr uint8_t kCreditsInvalid = 0x1F;
inline uint8_t Ack(uint8_t credits) {
  return kAck | (credits & kValueMask);
}
inline uint8_t RnrNak(uint8_t timer) {
  return kRnrNak | (timer & kValueMask);
}
inline uint8_t Nak(uint8_t code) {
  return kNak | (code & kValueMask);
}
}  // namespace aeth

// Atomic ACK Extended Transport Header (9.3.6): the remote data before the operation.
struct AtomicAckEth {
  uint8_t* b;
  uint64_t orig_remote_data() const { return be::Get(b, 8); }
  void set_orig_remote_data(uint64_t v) { be::Put(b, 8, v); }
};

// Immediate data (9.3.7) and the R_Key of SEND with Invalidate (IETH, 9.3.8): four bytes each,
// handed to the consumer as they are on the wire.
struct ImmDt {
  uint8_t* b;
  uint32_t value() const { return static_cast<uint32_t>(be::Get(b, 4)); }
  void set_value(uint32_t v) { be::Put(b, 4, v); }
};
using Ieth = ImmDt;

}  // namespace ibemu::wire
