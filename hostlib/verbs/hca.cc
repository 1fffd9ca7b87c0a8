#include "hostlib/verbs/hca.h"

#include <cstdio>
#include <cstdlib>

namespace ibemu::verbs {

Hca& Hca::Get() {
  // Never destroyed: programs call verbs from atexit handlers and other threads at exit.
  static Hca* hca = new Hca();
  return *hca;
}

Hca::Hca() : where_(hostclient::FabricAddress::FromEnv()) {
  if (const char* v = std::getenv("IBEMU_VERBS_HCA"); v && *v) {
    node_ = v;
    variable_ = "IBEMU_VERBS_HCA";
  } else if (const char* u = std::getenv("IBEMU_UMAD_PORT"); u && *u) {
    // <node>:<port> or <node>; node names may contain ':' only before the last one.
    std::string s = u;
    auto colon = s.rfind(':');
    bool has_port = colon != std::string::npos && colon + 1 < s.size() &&
                    s.find_first_not_of("0123456789", colon + 1) == std::string::npos;
    node_ = has_port ? s.substr(0, colon) : s;
    variable_ = "IBEMU_UMAD_PORT";
  }
}

void Hca::Hint(const std::string& why) {
  if (hinted_.exchange(true)) return;
  std::fprintf(stderr, "libibverbs (ibemu): no RDMA device: %s\n", why.c_str());
}

std::optional<umad::CaAttributes> Hca::Describe() {
  if (node_.empty()) {
    Hint(
        "IBEMU_VERBS_HCA is not set, so this process stands behind no HCA of an emulated "
        "fabric. Start a fabric with `ibemu up <topology or scenario>` and run the program with "
        "`ibemu exec --hca <node> -- <program>` (or set IBEMU_VERBS_HCA=<node>)");
    return std::nullopt;
  }
  std::string why;
  auto ca = hostclient::DescribeNode(
      where_, node_, variable_, link_,
      [this] {
        std::lock_guard lock(mu_);
        return link_.Start(where_.Endpoint());
      },
      &why);
  if (!ca) Hint(why);
  return ca;
}

}  // namespace ibemu::verbs
