// A packet in flight: the real IB header bytes (LRH, BTH, extension headers) plus what the
// emulator must remember about it while it sits in a buffer. Synthetic traffic carries a payload
// length, not payload bytes.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/link/link_rate.h"
#include "common/wire/bth.h"
#include "common/wire/flow_control_packet.h"
#include "common/wire/grh.h"
#include "common/wire/lrh.h"

namespace ibemu::engine {

using link::SimTime;

// The longest header built: a UD datagram with a GRH and an immediate (LRH 8, GRH 40, BTH 12,
// DETH 8, ImmDt 4). Connected packets carry no GRH here (docs/blocks/hca_verbs.md).
constexpr int kMaxHeaderBytes = 72;
constexpr int kIcrcBytes = 4;
constexpr int kVcrcBytes = 2;
constexpr uint32_t kNoFlow = 0xFFFFFFFFu;
constexpr int kMadBytes = 256;
using MadBytes = std::array<uint8_t, kMadBytes>;

// Laid out for the cache: what a switch reads and writes at every hop (the FIFO link, the hop's
// times, the id the digest takes, ports, VL and classes, the lengths) and the LRH share the first
// 64-byte line, the BTH starts the second; the natural order spread a packet-hop over four.
struct alignas(64) Packet {
  Packet* next = nullptr;  // intrusive FIFO link

  // Per-hop state, rewritten at every receiving port.
  SimTime head_arrival = 0;  // when the first byte arrived at this hop
  SimTime tail_arrival = 0;  // when the last byte has arrived at this hop
  SimTime ready_at = 0;      // when the head has been routed and may be arbitrated
  // Read with every event that carries the packet (the digest takes it with the LRH).
  uint64_t id = 0;  // unique in a run: source LP << 40 | per-source counter
  uint32_t payload_len = 0;
  uint16_t in_port = 0;
  uint16_t out_port = 0;
  // On the link it arrived on (at a switch, until the crossbar reads it).
  uint16_t credit_class = 0;
  uint16_t out_class = 0;  // at a switch: on the link it leaves on
  uint16_t queue = 0;
  uint8_t out_vl = 0;
  uint8_t hdr_len = 0;
  std::array<uint8_t, kMaxHeaderBytes> hdr{};

  // Bookkeeping that travels with the packet across links and processes.
  uint32_t flow = kNoFlow;  // traffic group the packet belongs to, for results
  SimTime created = 0;      // when the source queued it (for latency)
  SimTime injected = 0;     // when its head left the source HCA
  // At the destination: how congestion control answers this packet's marking (cc::Echo), kept
  // until the acknowledgement that may carry it is built.
  uint8_t cc_echo = 0;
  // Management datagrams are the only payload the emulator looks into: the MAD (256 bytes) after
  // the DETH. Data packets leave it null, so they stay small.
  std::unique_ptr<MadBytes> mad;
  // The payload of a verbs program's packet (hostlib/verbs): read from the sender's memory when
  // the packet is built, written into the receiver's when it is delivered. Synthetic traffic
  // leaves it null. In-process only: a partitioned run carries no verbs traffic.
  std::unique_ptr<std::vector<uint8_t>> data;

  wire::Lrh lrh() { return wire::Lrh{hdr.data()}; }
  // The BTH follows the LRH, or the GRH when the LRH's LNH says there is one.
  int grh_bytes() const {
    return (hdr[1] & 0x3) == static_cast<uint8_t>(wire::Lnh::kIbaGlobal) ? wire::kGrhBytes : 0;
  }
  wire::Bth bth() { return wire::Bth{hdr.data() + wire::kLrhBytes + grh_bytes()}; }
  // Bytes on the wire: headers, payload padded to 4 bytes, ICRC and VCRC.
  uint32_t pad() const { return (4 - payload_len % 4) % 4; }
  uint32_t wire_bytes() const { return hdr_len + payload_len + pad() + kIcrcBytes + kVcrcBytes; }
  // 64-byte flow-control blocks the packet occupies in a receive buffer (IBA 7.9.4.1).
  uint32_t blocks() const { return wire::CreditBlocks(wire_bytes()); }
  // LRH PktLen: 4-byte words from LRH through ICRC.
  uint16_t pkt_len_words() const {
    return static_cast<uint16_t>((hdr_len + payload_len + pad() + kIcrcBytes) / 4);
  }
};

static_assert(offsetof(Packet, hdr) + wire::kLrhBytes <= 64, "the LRH shares the hot line");

// Packets are recycled, never freed in the hot path.
class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;
  ~PacketPool();

  Packet* Get();
  void Put(Packet* p);
  size_t live() const { return live_; }

 private:
  // Slabs, so packets still in flight when a run ends are released with the pool.
  std::vector<std::unique_ptr<Packet[]>> slabs_;
  Packet* free_ = nullptr;
  size_t live_ = 0;
};

// An intrusive FIFO of packets: buffers never allocate per packet.
struct PacketQueue {
  Packet* head = nullptr;
  Packet* tail = nullptr;
  uint32_t count = 0;
  uint32_t blocks = 0;

  bool empty() const { return head == nullptr; }
  void Push(Packet* p) {
    p->next = nullptr;
    if (tail)
      tail->next = p;
    else
      head = p;
    tail = p;
    ++count;
    blocks += p->blocks();
  }
  Packet* Pop() {
    Packet* p = head;
    head = p->next;
    if (!head) tail = nullptr;
    p->next = nullptr;
    --count;
    blocks -= p->blocks();
    return p;
  }
};

}  // namespace ibemu::engine
