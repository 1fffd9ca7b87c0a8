#include <vector>

#include "emulator/policy/builtin.h"
#include "emulator/policy/input_arbiter.h"
#include "emulator/policy/vl_arbiter.h"

namespace ibemu::policy {
namespace {

class RoundRobinInputArbiter : public InputArbiter {
 public:
  explicit RoundRobinInputArbiter(int n) { last_.fill(n - 1); }
  int Pick(int vl, int n, EligibleFn eligible) override {
    int& last = last_[vl];
    for (int k = 1; k <= n; ++k) {
      int i = (last + k) % n;
      if (eligible(i)) return last = i;
    }
    return -1;
  }

 private:
  std::array<int, kMaxVls> last_{};
};

// Lowest-numbered input first: a strict-priority baseline that shows starvation.
class FixedPriorityInputArbiter : public InputArbiter {
 public:
  int Pick(int, int n, EligibleFn eligible) override {
    for (int i = 0; i < n; ++i)
      if (eligible(i)) return i;
    return -1;
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
