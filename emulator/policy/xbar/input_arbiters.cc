#include <vector>

#include "emulator/policy/builtin.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::policy {
namespace {

class RoundRobinInputArbiter : public InputArbiter {
 public:
  explicit RoundRobinInputArbiter(int n) { last_.fill(n - 1); }
  int Pick(int vl, int n, const uint64_t* requesting, EligibleFn eligible) override {
    int& last = last_[vl];
    int i = ScanFrom(last, n, requesting, eligible);
    if (i >= 0) last = i;
    return i;
  }

 private:
  std::array<int, kMaxVls> last_{};
};

// Lowest-numbered input first: a strict-priority baseline that shows starvation.
class FixedPriorityInputArbiter : public InputArbiter {
 public:
  int Pick(int, int n, const uint64_t* requesting, EligibleFn eligible) override {
    return ScanFrom(n - 1, n, requesting, eligible);
  }
};

}  // namespace

void RegisterInputArbiters() {
  auto& r = InputArbiterRegistry::Get();
  r.Add("xbar.roundrobin", "round robin over input ports at each output, per VL (default)",
        [](int n) { return std::make_unique<RoundRobinInputArbiter>(n); });
  r.Add("xbar.fixed", "lowest-numbered requesting input port first (strict priority)",
        [](int) { return std::make_unique<FixedPriorityInputArbiter>(); });
}

}  // namespace ibemu::policy
