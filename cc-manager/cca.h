// One Congestion Control Agent as the manager knows it: a switch's (port 0) or a CA port's, where
// it is, what state its programming is in, and what the manager has read of it.
#pragma once
#include <cstdint>
#include <set>
#include <string>

namespace ibemu::ccmgr {

enum class CcaState {
  kPending,   // found, not programmed yet (or to be programmed again)
  kVerified,  // programmed and read back as the policy says
  kMismatch,  // answered, but reads back otherwise
  kRefused,   // a Set got an error status
  kNoAnswer,  // a MAD went unanswered (most often a CC_Key the CCA does not take)
  kGone,      // missing from the last discovery
};
const char* StateName(CcaState s);

struct Cca {
  std::string name;
  uint64_t guid = 0;
  bool is_switch = false;
  int port = 0;  // CA port (0 for a switch)
  int num_ports = 0;
  uint16_t lid = 0;
  CcaState state = CcaState::kPending;
  std::string detail;  // what went wrong
  uint64_t programmed = 0;
  uint64_t events = 0;  // congestion events counted since the manager started
  uint16_t key_violations = 0;
  uint64_t traps = 0;  // Bad CC_Key traps received from it
  // The last CongestionLog read: its counter, to count what the log could not keep, and its
  // time, extended past the 32-bit wrap (1.024 us ticks).
  bool have_log = false;
  uint16_t log_counter = 0;
  uint32_t log_now = 0;
  uint64_t log_ticks = 0;
  std::set<int> marking_ports;  // switch ports that have marked: each poll reports them all

  bool gone() const { return state == CcaState::kGone; }
};

}  // namespace ibemu::ccmgr
