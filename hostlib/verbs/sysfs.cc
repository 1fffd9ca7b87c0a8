#include "hostlib/verbs/sysfs.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hostlib/verbs/attributes.h"
#include "hostlib/verbs/sysfs_tree.h"

namespace ibemu::verbs {
namespace {

std::string Guid(uint64_t g) {
  char b[24];
  std::snprintf(b, sizeof b, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48),
                static_cast<unsigned>(g >> 32) & 0xFFFF, static_cast<unsigned>(g >> 16) & 0xFFFF,
                static_cast<unsigned>(g) & 0xFFFF);
  return b;
}

std::string Hex(uint32_t v, int digits = 0) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*x", digits, v);
  return b;
}

const char* StateName(uint32_t s) {
  static const char* const kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return s < 6 ? kNames[s] : "UNKNOWN";
}

const char* PhysStateName(uint32_t s) {
  static const char* const kNames[] = {
      "<unknown>",         "Sleep",   "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
      "LinkErrorRecovery", "Phy Test"};
  return s < 8 ? kNames[s] : "<unknown>";
}

// sysfs "rate": "<Gb/s> Gb/sec (<width> <speed>)", as the kernel's rate_show prints it.
std::string Rate(const umad::PortAttributes& p) {
  int lanes = 0;
  switch (p.link_width_active()) {
    case 1:
      lanes = 1;
      break;
    case 2:
      lanes = 4;
      break;
    case 4:
      lanes = 8;
      break;
    case 8:
      lanes = 12;
      break;
    case 16:
      lanes = 2;
      break;
  }
  // Per lane, as the kernel counts: the data rate of FDR and faster (64b/66b) in whole Gb/s.
  double lane = 0;
  const char* speed = "";
  uint32_t ext = p.link_speed_ext_active();
  if (ext & 1) {
    lane = 14, speed = " FDR";
  } else if (ext & 2) {
    lane = 25, speed = " EDR";
  } else if (ext & 4) {
    lane = 50, speed = " HDR";
  } else if (p.link_speed_active() == 4) {
    lane = 10, speed = " QDR";
  } else if (p.link_speed_active() == 2) {
    lane = 5, speed = " DDR";
  } else if (p.link_speed_active() == 1) {
    lane = 2.5;
  }
  double gbps = lanes * lane;
  char b[48];
  if (gbps == static_cast<int>(gbps))
    std::snprintf(b, sizeof b, "%d Gb/sec (%dX%s)", static_cast<int>(gbps), lanes, speed);
  else
    std::snprintf(b, sizeof b, "%.1f Gb/sec (%dX%s)", gbps, lanes, speed);
  return b;
}

std::optional<std::string> PortFile(const umad::PortAttributes& p, const std::string& f) {
  if (f == "lid") return Hex(p.lid());
  if (f == "sm_lid") return Hex(p.sm_lid());
  if (f == "lid_mask_count") return std::to_string(p.lmc());
  if (f == "sm_sl") return std::to_string(p.sm_sl());
  if (f == "state") return std::to_string(p.state()) + ": " + StateName(p.state());
  if (f == "phys_state")
    return std::to_string(p.phys_state()) + ": " + PhysStateName(p.phys_state());
  if (f == "rate") return Rate(p);
  if (f == "cap_mask") return Hex(p.capmask(), 8);
  if (f == "link_layer") return std::string("InfiniBand");
  if (f.rfind("gids/", 0) == 0 || f.rfind("pkeys/", 0) == 0) {
    bool gids = f[0] == 'g';
    const char* num = f.c_str() + (gids ? 5 : 6);
    char* end = nullptr;
    long i = std::strtol(num, &end, 10);
    if (!*num || *end || i < 0) return std::nullopt;
    if (!gids) {
      if (i >= p.pkeys_size()) return std::nullopt;
      return Hex(p.pkeys(static_cast<int>(i)), 4);
    }
    ibv_gid g;
    if (!PortGid(p, static_cast<int>(i), &g)) return std::nullopt;
    std::string s;
    for (int k = 0; k < 16; k += 2) {
      char b[8];
      std::snprintf(b, sizeof b, "%s%02x%02x", k ? ":" : "", g.raw[k], g.raw[k + 1]);
      s += b;
    }
    return s;
  }
  return std::nullopt;
}

std::optional<std::string> Contents(const umad::CaAttributes& ca, const std::string& dir,
                                    const std::string& file) {
  if (dir == UverbsPath(kUverbsName)) {
    if (file == "ibdev") return ca.ca_name();
    if (file == "abi_version") return std::string("1");
    return std::nullopt;
  }
  if (dir == SysfsRoot() + "/class/infiniband_verbs" && file == "abi_version")
    return std::string("6");
  if (dir != IbdevPath(ca.ca_name())) return std::nullopt;
  if (file == "node_type") return std::string(ca.node_type() == 2 ? "2: switch" : "1: CA");
  if (file == "node_guid") return Guid(ca.node_guid());
  if (file == "sys_image_guid") return Guid(ca.system_guid());
  if (file == "fw_ver") return ca.fw_ver();
  if (file == "hw_rev") return ca.hw_rev();
  if (file == "hca_type") return ca.ca_type();
  if (file == "board_id") return ca.board_id();
  if (file == "node_desc") return ca.node_description();
  if (file.rfind("ports/", 0) == 0) {
    auto slash = file.find('/', 6);
    if (slash == std::string::npos) return std::nullopt;
    const umad::PortAttributes* p = FindPort(ca, std::atoi(file.substr(6, slash - 6).c_str()));
    if (!p || file.substr(6, slash - 6) != std::to_string(p->port())) return std::nullopt;
    return PortFile(*p, file.substr(slash + 1));
  }
  return std::nullopt;
}

}  // namespace

const std::string& SysfsRoot() {
  static const std::string root = [] {
    if (const std::string& tree = SysfsTree::Get().root(); !tree.empty()) return tree;
    std::string r = "/sys";
    if (const char* env = std::getenv("SYSFS_PATH"); env && *env) {
      r = env;
      while (r.size() > 1 && r.back() == '/') r.pop_back();
    }
    return r;
  }();
  return root;
}

std::string IbdevPath(const std::string& ca_name) {
  return SysfsRoot() + "/class/infiniband/" + ca_name;
}

std::string UverbsPath(const std::string& uverbs) {
  return SysfsRoot() + "/class/infiniband_verbs/" + uverbs;
}

std::optional<std::string> SysfsFile(const umad::CaAttributes& ca, const std::string& dir,
                                     const std::string& file) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  // Split as rdma-core's callers do (the device's directory, "ports/1/lid") or anywhere else
  // (".../ports/1", "lid"): a program opening the tree's files may pick either.
  const std::string path = d + "/" + file;
  for (const std::string& base : {IbdevPath(ca.ca_name()), UverbsPath(kUverbsName),
                                  SysfsRoot() + "/class/infiniband_verbs"}) {
    if (path.size() <= base.size() || path.compare(0, base.size(), base) != 0 ||
        path[base.size()] != '/')
      continue;
    auto s = Contents(ca, base, path.substr(base.size() + 1));
    if (s) *s += '\n';
    return s;
  }
  return std::nullopt;
}

std::vector<std::pair<std::string, std::string>> SysfsFiles(const umad::CaAttributes& ca) {
  // Only the names are listed here; the contents come from SysfsFile itself, so the files of the
  // tree and what ibv_read_sysfs_file returns cannot differ by a byte.
  const std::string ibdev = "class/infiniband/" + ca.ca_name();
  const std::string uverbs = std::string("class/infiniband_verbs/") + kUverbsName;
  std::vector<std::string> names = {"class/infiniband_verbs/abi_version", uverbs + "/ibdev",
                                    uverbs + "/abi_version"};
  for (const char* f : {"node_type", "node_guid", "sys_image_guid", "fw_ver", "hw_rev", "hca_type",
                        "board_id", "node_desc"})
    names.push_back(ibdev + "/" + f);
  for (const umad::PortAttributes& p : ca.ports()) {
    const std::string port = ibdev + "/ports/" + std::to_string(p.port());
    for (const char* f : {"lid", "lid_mask_count", "sm_lid", "sm_sl", "state", "phys_state", "rate",
                          "cap_mask", "link_layer"})
      names.push_back(port + "/" + f);
    ibv_gid g;
    for (int i = 0; PortGid(p, i, &g); ++i) names.push_back(port + "/gids/" + std::to_string(i));
    for (int i = 0; i < p.pkeys_size(); ++i) names.push_back(port + "/pkeys/" + std::to_string(i));
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const std::string& name : names) {
    auto slash = name.rfind('/');
    auto contents =
        SysfsFile(ca, SysfsRoot() + "/" + name.substr(0, slash), name.substr(slash + 1));
    if (contents) files.emplace_back(name, std::move(*contents));
  }
  return files;
}

}  // namespace ibemu::verbs
