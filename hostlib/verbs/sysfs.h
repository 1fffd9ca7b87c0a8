// The sysfs entries of the emulated HCA, served from memory: what rdma-core's
// ibv_read_sysfs_file would read under /sys/class/infiniband/mlx5_0 and
// /sys/class/infiniband_verbs/uverbs0 on a host with the card (no such files exist here, and the
// values change as an SM programs the port, so they are made from a fresh description).
#pragma once
#include <optional>
#include <string>

#include "umad.pb.h"

namespace ibemu::verbs {

// ibv_get_sysfs_path(): $SYSFS_PATH without trailing slashes, or "/sys".
const std::string& SysfsRoot();
std::string IbdevPath(const std::string& ca_name);  // <root>/class/infiniband/<ca>
std::string UverbsPath(const std::string& uverbs);  // <root>/class/infiniband_verbs/<uverbs>
inline constexpr const char* kUverbsName = "uverbs0";

// The contents of `dir`/`file` (each ending in a newline, as the kernel writes them) when the
// path is one of the device's, else nothing. `file` may have subdirectories ("ports/1/lid").
std::optional<std::string> SysfsFile(const umad::CaAttributes& ca, const std::string& dir,
                                     const std::string& file);

}  // namespace ibemu::verbs
