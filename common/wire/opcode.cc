#include "common/wire/opcode.h"

namespace ibemu::wire::opcode {

Info Describe(uint8_t op) {
  Info i;
  if (op == kCnp) {
    i.transport = Transport::kCnp;
    return i;
  }
  uint8_t prefix = op & 0xE0;
  uint8_t o = op & 0x1F;
  i.operation = o;
  switch (prefix) {
    case kRc:
      if (o > kSendOnlyInvalidate || o == 0x15) return Info{};
      i.transport = Transport::kRc;
      break;
    case kUc:
      if (o > kWriteOnlyImm) return Info{};
      i.transport = Transport::kUc;
      break;
    case kUd:
      if (o != kSendOnly && o != kSendOnlyImm) return Info{};
      i.transport = Transport::kUd;
      i.deth = true;
      break;
    default:  // RD (prefix 010) is not modelled; the other prefixes are reserved or vendor
      return Info{};
  }
  switch (o) {
    case kSendFirst:
    case kWriteFirst:
    case kReadResponseFirst:
      i.position = Position::kFirst;
      break;
    case kSendMiddle:
    case kWriteMiddle:
    case kReadResponseMiddle:
      i.position = Position::kMiddle;
      break;
    case kSendLast:
    case kSendLastImm:
    case kWriteLast:
    case kWriteLastImm:
    case kReadResponseLast:
    case kSendLastInvalidate:
      i.position = Position::kLast;
      break;
    default:
      i.position = Position::kOnly;
  }
  i.reth = o == kWriteFirst || o == kWriteOnly || o == kWriteOnlyImm || o == kReadRequest;
  i.atomic_eth = o == kCompareSwap || o == kFetchAdd;
  i.aeth = o == kAcknowledge || o == kAtomicAcknowledge || o == kReadResponseFirst ||
           o == kReadResponseLast || o == kReadResponseOnly;
  i.atomic_ack_eth = o == kAtomicAcknowledge;
  i.immdt = o == kSendLastImm || o == kSendOnlyImm || o == kWriteLastImm || o == kWriteOnlyImm;
  i.ieth = o == kSendLastInvalidate || o == kSendOnlyInvalidate;
  i.payload = o <= kWriteOnlyImm || (o >= kReadResponseFirst && o <= kReadResponseOnly) ||
              o == kSendLastInvalidate || o == kSendOnlyInvalidate;
  return i;
}

}  // namespace ibemu::wire::opcode
