// The sysfs tree of the emulated HCA: the device's files (sysfs.h) written out as real files, laid
// out as the kernel lays out /sys, so a program that opens
// <ibv_get_sysfs_path()>/class/infiniband/mlx5_0/ports/1/lid itself reads what
// ibv_read_sysfs_file returns.
//
// It lives in the fabric's run directory (transport::ResolveRunDir, the directory of the fabric's
// sockets), one tree per node: <run dir>/sysfs/<fabric>/<node>/class/... Every process behind
// the same node shares it, as the processes of a host share /sys; each rewrites it from its own
// fresh description, so the tree a process finds (left by an earlier one, or by an earlier
// fabric) is corrected at its first refresh. The run directory is private to the user (0700), and
// so are sysfs/, sysfs/<fabric>/ and the node's directory; nothing here is ever cleaned up by a
// fabric (lifecycle.md: an instance touches only its own files), and nothing needs to be.
#pragma once
#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>

#include "common/transport/run_dir.h"
#include "umad.pb.h"

namespace ibemu::verbs {

// <run dir>/sysfs/<fabric>/<node>, each level created 0700 and checked as the run directory is
// (ours, a directory and not a symlink, no write for others), or "" with `why` saying what is
// wrong. Names are escaped to one path component each (bytes other than letters, digits, '_',
// '-' and a '.' not in front become %XX).
std::string PrepareSysfsTree(const transport::RunDir& run_dir, const std::string& fabric,
                             const std::string& node, std::string* why);

class SysfsTree {
 public:
  // The process's tree, for the node it stands behind (verbs::Hca). It has no root when there is
  // no node (no device either), or when the directory cannot be made: then one line on stderr
  // says why, and ibv_get_sysfs_path() is $SYSFS_PATH or /sys as before.
  static SysfsTree& Get();

  explicit SysfsTree(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  // True when `path` is the root or below it (lexically: no symlinks are followed).
  bool Contains(const std::string& path) const;

  // Makes the tree hold exactly the files of `ca` (SysfsFiles). Each changed file is written to
  // a temporary file in its directory and renamed over the old one, so a reader, in this process
  // or another, sees the old contents or the new, never half a file. Files the description no
  // longer has (a shorter P_Key table, a port gone) are removed. Unchanged files are not
  // touched, so calling this on every query costs no system call but one stat. A failure is
  // said once on stderr and tried again at the next call.
  void Write(const umad::CaAttributes& ca);

 private:
  bool EnsureDirs(const std::string& rel);  // mkdir -p of root/rel
  bool WriteFile(const std::string& rel, const std::string& contents);
  void Prune(const std::string& rel, const std::map<std::string, std::string>& keep);
  void Warn(const std::string& what);

  std::string root_;
  std::mutex mu_;
  std::map<std::string, std::string> written_;  // path relative to root -> contents, under mu_
  ino_t class_ino_ = 0;  // root/class as last seen: another inode means the tree was removed
  bool warned_ = false;
};

}  // namespace ibemu::verbs
