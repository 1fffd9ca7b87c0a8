// IBA 7.6.9 VL arbitration: a high- and a low-priority table of (VL, weight) entries, weights in
// 64-byte units, and Limit of High Priority bounding how long the high table may starve the low.
#include "emulator/policy/builtin.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::policy {
namespace {

class IbVlArbiter : public VlArbiter {
 public:
  explicit IbVlArbiter(const VlArbConfig& c) : high_(c.high), low_(c.low) {
    limit_ = c.limit_of_high_priority;
    if (high_.entries.empty() && low_.entries.empty())
      for (int v = 0; v < c.data_vls; ++v) low_.entries.push_back({static_cast<uint8_t>(v), 64});
    // Either table's Pick returns the VL of an entry with weight, and finds one within a round
    // whenever that VL is eligible: with all such entries naming one VL, that VL is the answer.
    int only = -1;
    for (const Table* t : {&high_, &low_})
      for (const VlArbEntry& e : t->entries) {
        if (e.weight == 0) continue;
        if (only >= 0 && e.vl != only) return;
        only = e.vl;
      }
    set_only_vl(only);
  }

  int Pick(uint32_t eligible) override {
    bool high_has = high_.Has(eligible), low_has = low_.Has(eligible);
    bool high_turn =
        high_has && (!low_has || limit_ == 255 || high_bytes_ <= uint64_t{limit_} * 4096);
    if (high_turn) {
      from_high_ = true;
      return high_.Pick(eligible);
    }
    if (low_has) {
      from_high_ = false;
      high_bytes_ = 0;
      return low_.Pick(eligible);
    }
    return -1;
  }

  void Sent(int vl, uint32_t bytes) override {
    Table& t = from_high_ ? high_ : low_;
    t.Charge((bytes + 63) / 64);
    if (from_high_) high_bytes_ += bytes;
  }

 private:
  struct Table {
    explicit Table(std::vector<VlArbEntry> e = {}) : entries(std::move(e)) {}
    std::vector<VlArbEntry> entries;
    size_t cur = 0;
    int64_t remaining = -1;  // weight left in the current entry; -1 before the first pick

    bool Has(uint32_t eligible) const {
      for (auto& e : entries)
        if (e.weight > 0 && (eligible >> e.vl & 1)) return true;
      return false;
    }
    int Pick(uint32_t eligible) {
      // Stay on the current entry while it has weight left and its VL has a packet; otherwise
      // move on and reload the next entry's weight (IBA 7.6.9.1).
      for (size_t n = 0; n <= entries.size(); ++n) {
        const VlArbEntry& e = entries[cur];
        if (remaining < 0) remaining = e.weight;
        if (remaining > 0 && (eligible >> e.vl & 1)) return e.vl;
        cur = (cur + 1) % entries.size();
        remaining = -1;
      }
      return -1;
    }
    void Charge(uint32_t units) {
      remaining -= units;
      if (remaining <= 0) {
        cur = (cur + 1) % entries.size();
        remaining = -1;
      }
    }
  };

  Table high_, low_;
  uint8_t limit_ = 0;
  uint64_t high_bytes_ = 0;
  bool from_high_ = false;
};

// The arbitration of the thesis's OMNeT++ model: plain packet round robin over VLs.
class RoundRobinVlArbiter : public VlArbiter {
 public:
  int Pick(uint32_t eligible) override {
    for (int n = 1; n <= kMaxVls; ++n) {
      int v = (last_ + n) % kMaxVls;
      if (eligible >> v & 1) return last_ = v;
    }
    return -1;
  }
  void Sent(int, uint32_t) override {}

 private:
  int last_ = kMaxVls - 1;
};

}  // namespace

void RegisterVlArbiters() {
  auto& r = VlArbiterRegistry::Get();
  r.Add("vlarb.ib", "IBA VLArbitrationTable: high/low (VL, weight) tables and LimitOfHighPriority",
        [](const VlArbConfig& c) { return std::make_unique<IbVlArbiter>(c); });
  r.Add("vlarb.roundrobin", "packet round robin over VLs (the thesis's OMNeT++ model)",
        [](const VlArbConfig&) { return std::make_unique<RoundRobinVlArbiter>(); });
}

}  // namespace ibemu::policy
