// LID assignment that survives restarts, as OpenSM's guid2lid file does: every port that needs a
// LID (switch port 0, each cabled CA port) keeps, in order of preference, the LID the state file
// gives its GUID, the LID it already has (set by an SM before us), or the lowest LID free.
// LMC is 0: one LID per port.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ibemu::fabricmgr {

struct LidRequest {
  uint64_t port_guid = 0;
  uint16_t current_lid = 0;  // what PortInfo says now
};

class LidManager {
 public:
  // `file` may be empty: no persistence. A missing file is an empty one; a malformed line is
  // skipped with a warning in warnings().
  explicit LidManager(std::string file);

  // Assigns LIDs to every port asked for; returns GUID -> LID for them. Ports of earlier calls
  // that are not asked for again keep their LIDs in the table (a cable that comes back gets its
  // old LID). Returns how many got a LID they did not have (`*changed`).
  std::map<uint64_t, uint16_t> Assign(const std::vector<LidRequest>& ports, int* changed);
  // Writes the table (atomically: a temporary file renamed over the old one). False on error.
  bool Save(std::string* error) const;

  const std::map<uint64_t, uint16_t>& table() const { return table_; }
  const std::vector<std::string>& warnings() const { return warnings_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<uint64_t, uint16_t> table_;  // every GUID ever given a LID, this run or before
  std::vector<std::string> warnings_;
};

}  // namespace ibemu::fabricmgr
