// libFuzzer target: ibemu-ccmgr's policy reader on arbitrary bytes, as an opensm.conf (first byte
// even) or a YAML policy (odd). A policy is either refused with PolicyError, naming where, or it
// loads, and then every node it names gets settings that a CCA would take (CCTI_Min within the
// table, at most 128 entries); nothing else may happen.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cc-manager/policy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool yaml = data[0] & 1;
  char path[] = "/tmp/ccmgr-policy-fuzz-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 0;
  std::string file = std::string(path) + (yaml ? ".yaml" : ".conf");
  if (write(fd, data + 1, size - 1) != static_cast<ssize_t>(size - 1)) {
    close(fd);
    unlink(path);
    return 0;
  }
  close(fd);
  rename(path, file.c_str());
  try {
    ibemu::ccmgr::CcPolicy p = ibemu::ccmgr::LoadPolicy(file);
    for (const auto& [node, options] : p.node_options) {
      ibemu::mad::CcSettings s = p.For(node, 0);
      if (s.cct.size() > 128) __builtin_trap();
      ibemu::mad::CaCongestionSetting ca;
      ca.Apply(s.ca);
      if (ca.SlWithCctiMinAbove(s.cct.empty() ? 0 : static_cast<int>(s.cct.size()) - 1) >= 0)
        __builtin_trap();
    }
  } catch (const ibemu::ccmgr::PolicyError& e) {
    if (std::string(e.what()).rfind(file, 0) != 0) __builtin_trap();  // the error names the file
  }
  unlink(file.c_str());
  return 0;
}
