#include <mutex>

#include "emulator/cc/mechanism.h"

namespace ibemu::cc {
namespace ib {
void Register();
}
namespace santos {
void Register();
}
namespace mvcm {
void Register();
}
namespace selftuned {
void Register();
}
namespace dbbm {
void Register();
}
namespace fbicm {
void Register();
}
void RegisterProbe();

namespace {

// No congestion control at all: the devices skip every hook (the hardware without CC).
class NoCc : public Mechanism {
 public:
  std::unique_ptr<SwitchCc> ForSwitch(uint64_t) const override { return nullptr; }
  std::unique_ptr<HcaCc> ForHca(uint64_t) const override { return nullptr; }
};

}  // namespace

void RegisterMechanisms() {
  static std::once_flag once;
  std::call_once(once, [] {
    MechanismRegistry::Get().Add("none",
                                 "no congestion control: nothing is marked, echoed or throttled",
                                 [](const policy::Params& p) {
                                   p.CheckKeys({});
                                   return std::make_unique<NoCc>();
                                 });
    ib::Register();
    santos::Register();
    mvcm::Register();
    selftuned::Register();
    dbbm::Register();
    fbicm::Register();
    RegisterProbe();
  });
}

}  // namespace ibemu::cc
