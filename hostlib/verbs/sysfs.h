// The sysfs entries of the emulated HCA: what rdma-core's ibv_read_sysfs_file would read under
// /sys/class/infiniband/mlx5_0 and /sys/class/infiniband_verbs/uverbs0 on a host with the card,
// in the kernel's formats. The values change as an SM programs the port, so they are made from a
// fresh description; sysfs_tree.h writes them out as files, ibv_read_sysfs_file serves them.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "umad.pb.h"

namespace ibemu::verbs {

// ibv_get_sysfs_path(): the root of the process's sysfs tree (sysfs_tree.h) when it has one,
// else $SYSFS_PATH without trailing slashes, or "/sys". Decided once, at the first call.
const std::string& SysfsRoot();
std::string IbdevPath(const std::string& ca_name);  // <root>/class/infiniband/<ca>
std::string UverbsPath(const std::string& uverbs);  // <root>/class/infiniband_verbs/<uverbs>
inline constexpr const char* kUverbsName = "uverbs0";

// The contents of `dir`/`file` (each ending in a newline, as the kernel writes them) when the
// path is one of the device's, else nothing. `file` may have subdirectories ("ports/1/lid"), and
// `dir` may go below the device's directory (".../mlx5_0/ports/1" and "lid").
std::optional<std::string> SysfsFile(const umad::CaAttributes& ca, const std::string& dir,
                                     const std::string& file);

// Every file of the device, as (path relative to the sysfs root, contents): the same files and
// bytes SysfsFile serves, for writing them out.
std::vector<std::pair<std::string, std::string>> SysfsFiles(const umad::CaAttributes& ca);

}  // namespace ibemu::verbs
