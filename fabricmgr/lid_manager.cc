#include "fabricmgr/lid_manager.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ibemu::fabricmgr {
namespace {

// Unicast LIDs are 0x0001..0xBFFF (IBA 4.1.3).
constexpr uint32_t kMaxUnicastLid = 0xBFFF;

}  // namespace

LidManager::LidManager(std::string file) : file_(std::move(file)) {
  if (file_.empty()) return;
  std::ifstream in(file_);
  std::set<uint16_t> used;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    std::string guid_text;
    uint32_t lid = 0;
    uint64_t guid = 0;
    bool ok = static_cast<bool>(s >> guid_text >> lid);
    if (ok) {
      try {
        size_t used_chars = 0;
        guid = std::stoull(guid_text, &used_chars, 0);
        ok = used_chars == guid_text.size();
      } catch (const std::exception&) {
        ok = false;
      }
    }
    ok = ok && guid != 0 && lid >= 1 && lid <= kMaxUnicastLid;
    if (ok && !used.insert(static_cast<uint16_t>(lid)).second) ok = false;
    if (!ok) {
      warnings_.push_back(file_ + ":" + std::to_string(line_no) + ": ignored: " + line);
      continue;
    }
    table_[guid] = static_cast<uint16_t>(lid);
  }
}

std::map<uint64_t, uint16_t> LidManager::Assign(const std::vector<LidRequest>& ports,
                                                int* changed) {
  std::map<uint16_t, uint64_t> owner;  // LID -> GUID, for every LID in the table
  for (auto& [guid, lid] : table_) owner[lid] = guid;
  std::map<uint64_t, uint16_t> out;
  int fresh = 0;
  // 1. The table's LIDs.
  for (const LidRequest& r : ports)
    if (auto it = table_.find(r.port_guid); it != table_.end()) out[r.port_guid] = it->second;
  // 2. LIDs the ports already have, when nobody else holds them.
  for (const LidRequest& r : ports) {
    if (out.count(r.port_guid) || r.current_lid == 0 || r.current_lid > kMaxUnicastLid) continue;
    if (owner.count(r.current_lid)) continue;
    owner[r.current_lid] = r.port_guid;
    out[r.port_guid] = table_[r.port_guid] = r.current_lid;
  }
  // 3. The lowest free LID, for the rest (in the order asked, so discovery order decides).
  uint32_t next = 1;
  for (const LidRequest& r : ports) {
    if (out.count(r.port_guid)) continue;
    while (next <= kMaxUnicastLid && owner.count(static_cast<uint16_t>(next))) ++next;
    if (next > kMaxUnicastLid) break;  // out of LIDs: the port stays without one
    owner[static_cast<uint16_t>(next)] = r.port_guid;
    out[r.port_guid] = table_[r.port_guid] = static_cast<uint16_t>(next);
  }
  for (const LidRequest& r : ports)
    if (auto it = out.find(r.port_guid); it != out.end() && it->second != r.current_lid) ++fresh;
  if (changed) *changed = fresh;
  return out;
}

bool LidManager::Save(std::string* error) const {
  if (file_.empty()) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path(file_);
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  std::string tmp = file_ + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "# ibemu-fabricmgr GUID-to-LID table: port GUID, LID. Read at start, so LIDs stay.\n";
    for (auto& [guid, lid] : table_) {
      char line[64];
      std::snprintf(line, sizeof line, "0x%016llx %u\n", static_cast<unsigned long long>(guid),
                    static_cast<unsigned>(lid));
      out << line;
    }
    if (!out) {
      if (error) *error = "cannot write " + tmp;
      return false;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    if (error) *error = "cannot rename " + tmp + ": " + ec.message();
    return false;
  }
  return true;
}

}  // namespace ibemu::fabricmgr
