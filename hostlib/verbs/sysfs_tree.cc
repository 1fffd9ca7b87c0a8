#include "hostlib/verbs/sysfs_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "hostlib/verbs/hca.h"
#include "hostlib/verbs/sysfs.h"

namespace ibemu::verbs {
namespace {

// Node names come from topology files ("H1", but ibnetdiscover names may hold anything) and
// must stay one path component that cannot climb out ("..") or hide (".x").
std::string Escape(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (std::isalnum(c) || c == '_' || c == '-' || (c == '.' && i > 0)) {
      out += static_cast<char>(c);
    } else {
      char b[4];
      std::snprintf(b, sizeof b, "%%%02x", c);
      out += b;
    }
  }
  return out;
}

// The run directory's rule (common/transport/run_dir.cc) for the tree's own directories: what we
// find there may have been planted, so it must be ours, a real directory, and not writable by
// others; lstat, so a symlink is refused rather than followed.
std::string PrivateDir(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + path + ": " + std::strerror(errno);
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return path + ": " + std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return path + " is a symbolic link; refusing to follow it";
  if (!S_ISDIR(st.st_mode)) return path + " is not a directory";
  if (st.st_uid != geteuid())
    return path + " belongs to uid " + std::to_string(st.st_uid) + ", not to you";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return path + " has mode " + mode + "; others could replace its files";
  }
  return "";
}

// A temporary file is ".<name>.tmp.<pid>"; one whose writer is gone (it died between open and
// rename) may be removed, one whose writer lives is about to be renamed.
bool StaleTemporary(const std::string& name) {
  auto at = name.rfind(".tmp.");
  if (at == std::string::npos) return false;
  char* end = nullptr;
  long pid = std::strtol(name.c_str() + at + 5, &end, 10);
  if (pid <= 0 || *end) return false;
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string PrepareSysfsTree(const transport::RunDir& run_dir, const std::string& fabric,
                             const std::string& node, std::string* why) {
  *why = transport::PrepareRunDir(run_dir);
  if (!why->empty()) return "";
  std::string path = run_dir.path + "/sysfs";
  for (const std::string& next : {std::string(), "/" + Escape(fabric), "/" + Escape(node)}) {
    path += next;
    *why = PrivateDir(path);
    if (!why->empty()) return "";
  }
  return path;
}

SysfsTree& SysfsTree::Get() {
  // Never destroyed: programs call verbs from atexit handlers and other threads at exit.
  static SysfsTree* tree = [] {
    Hca& hca = Hca::Get();
    std::string root;
    if (!hca.node().empty()) {
      std::string why;
      root = PrepareSysfsTree(hca.where().run_dir, hca.where().fabric, hca.node(), &why);
      if (root.empty())
        std::fprintf(stderr,
                     "libibverbs (ibemu): no sysfs tree for node '%s': %s; ibv_get_sysfs_path() "
                     "is the host's and only ibv_read_sysfs_file sees the device's files\n",
                     hca.node().c_str(), why.c_str());
    }
    return new SysfsTree(root);
  }();
  return *tree;
}

bool SysfsTree::Contains(const std::string& path) const {
  if (root_.empty() || path.compare(0, root_.size(), root_) != 0) return false;
  return path.size() == root_.size() || path[root_.size()] == '/';
}

void SysfsTree::Write(const umad::CaAttributes& ca) {
  if (root_.empty()) return;
  auto files = SysfsFiles(ca);
  std::map<std::string, std::string> want(files.begin(), files.end());
  std::lock_guard lock(mu_);
  // What this process wrote is what the tree holds unless someone removed it (rm -r of the run
  // directory's sysfs/): then class/ is gone or new, and everything is written again.
  struct stat st;
  if (lstat((root_ + "/class").c_str(), &st) != 0 || st.st_ino != class_ino_) written_.clear();
  bool same_names = written_.size() == want.size();
  for (auto w = written_.begin(), n = want.begin(); same_names && w != written_.end(); ++w, ++n)
    same_names = w->first == n->first;
  for (const auto& [rel, contents] : want) {
    auto it = written_.find(rel);
    if (it != written_.end() && it->second == contents) continue;
    if (WriteFile(rel, contents))
      written_[rel] = contents;
    else
      written_.erase(rel);  // tried again next time
  }
  if (!same_names) {
    // The first write of this process, or ports, GIDs or P_Keys came or went: what another
    // process or an earlier fabric left and this description lacks goes.
    Prune("class", want);
    for (auto it = written_.begin(); it != written_.end();)
      it = want.count(it->first) ? std::next(it) : written_.erase(it);
  }
  if (lstat((root_ + "/class").c_str(), &st) == 0) class_ino_ = st.st_ino;
}

bool SysfsTree::EnsureDirs(const std::string& rel) {
  // Below the private root the directories are 0755 and the files 0444, as in /sys.
  for (size_t at = rel.find('/');; at = rel.find('/', at + 1)) {
    std::string dir = root_ + "/" + rel.substr(0, at);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      Warn("cannot create " + dir + ": " + std::strerror(errno));
      return false;
    }
    if (at == std::string::npos) return true;
  }
}

bool SysfsTree::WriteFile(const std::string& rel, const std::string& contents) {
  const std::string path = root_ + "/" + rel;
  const auto slash = path.rfind('/');
  const std::string tmp =
      path.substr(0, slash + 1) + "." + path.substr(slash + 1) + ".tmp." + std::to_string(getpid());
  unlink(tmp.c_str());  // left by a process that had our pid and died mid-write
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0 && errno == ENOENT && EnsureDirs(rel.substr(0, rel.rfind('/'))))
    fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);
  if (fd < 0) {
    Warn("cannot create " + tmp + ": " + std::strerror(errno));
    return false;
  }
  int err = 0;
  for (size_t done = 0; done < contents.size() && !err;) {
    ssize_t n = write(fd, contents.data() + done, contents.size() - done);
    if (n > 0)
      done += static_cast<size_t>(n);
    else if (n == 0 || errno != EINTR)
      err = n == 0 ? EIO : errno;
  }
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    unlink(tmp.c_str());
    Warn("cannot write " + path + ": " + std::strerror(err));
    return false;
  }
  return true;
}

void SysfsTree::Prune(const std::string& rel, const std::map<std::string, std::string>& keep) {
  const std::string dir = root_ + "/" + rel;
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name[0] == '.') {
      if (StaleTemporary(name)) unlinkat(dirfd(d), name.c_str(), 0);
      continue;
    }
    const std::string child = rel + "/" + name;
    struct stat st;
    if (fstatat(dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(st.st_mode)) {
      if (!keep.count(child)) unlinkat(dirfd(d), name.c_str(), 0);
      continue;
    }
    const std::string prefix = child + "/";
    auto below = keep.lower_bound(prefix);
    bool needed = below != keep.end() && below->first.compare(0, prefix.size(), prefix) == 0;
    static const std::map<std::string, std::string> kNothing;
    Prune(child, needed ? keep : kNothing);
    // Fails while another process is renaming into it; it goes at a later prune.
    if (!needed) unlinkat(dirfd(d), name.c_str(), AT_REMOVEDIR);
  }
  closedir(d);
}

void SysfsTree::Warn(const std::string& what) {
  if (warned_) return;
  warned_ = true;
  std::fprintf(stderr,
               "libibverbs (ibemu): sysfs tree %s: %s; ibv_read_sysfs_file still gives fresh "
               "values\n",
               root_.c_str(), what.c_str());
}

}  // namespace ibemu::verbs
