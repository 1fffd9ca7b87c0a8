#include "common/transport/run_dir.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ibemu::transport {
namespace {

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string Describe(const RunDir& dir) {
  return dir.source == "default" ? dir.path : dir.path + " (from " + dir.source + ")";
}

// Directories an override names may be shared with the group for reading, but nobody else may
// add, replace or remove entries; the defaults are ours alone (0700).
std::string CheckExisting(const RunDir& dir, const struct stat& st) {
  if (S_ISLNK(st.st_mode))
    return "run directory " + Describe(dir) + " is a symbolic link; refusing to follow it";
  if (!S_ISDIR(st.st_mode)) return "run directory " + Describe(dir) + " is not a directory";
  if (st.st_uid != geteuid())
    return "run directory " + Describe(dir) + " belongs to uid " + std::to_string(st.st_uid) +
           ", not to you (uid " + std::to_string(geteuid()) +
           "); another user may have created it: remove it or set IBEMU_RUN_DIR";
  mode_t forbidden = dir.source == "IBEMU_RUN_DIR" ? (S_IWGRP | S_IWOTH) : (S_IRWXG | S_IRWXO);
  if (st.st_mode & forbidden) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return "run directory " + Describe(dir) + " has mode " + mode +
           (dir.source == "IBEMU_RUN_DIR" ? "; other users could replace its sockets (use a "
                                            "directory only you can write, e.g. mode 0700)"
                                          : "; it must be 0700 (chmod 0700 it, or remove it)");
  }
  return "";
}

}  // namespace

RunDir ResolveRunDir() {
  if (const char* d = Env("IBEMU_RUN_DIR")) return {d, "IBEMU_RUN_DIR"};
  if (const char* d = Env("XDG_RUNTIME_DIR")) return {std::string(d) + "/ibemu", "XDG_RUNTIME_DIR"};
  return {"/tmp/ibemu-" + std::to_string(geteuid()), "default"};
}

std::string CheckRunDir(const RunDir& dir) {
  struct stat st;
  if (lstat(dir.path.c_str(), &st) != 0) {
    if (errno == ENOENT) return "";
    return "run directory " + Describe(dir) + ": " + std::strerror(errno);
  }
  return CheckExisting(dir, st);
}

std::string PrepareRunDir(const RunDir& dir) {
  if (dir.path.empty() || dir.path[0] != '/')
    return "run directory '" + dir.path + "' (from " + dir.source + ") is not an absolute path";
  // An override may name a directory whose parents do not exist yet; create them as mkdir -p
  // would, with the user's umask, and only the run directory itself with 0700.
  if (dir.source == "IBEMU_RUN_DIR") {
    for (size_t at = dir.path.find('/', 1); at != std::string::npos;
         at = dir.path.find('/', at + 1)) {
      std::string parent = dir.path.substr(0, at);
      if (mkdir(parent.c_str(), 0777) != 0 && errno != EEXIST)
        return "cannot create " + parent + " for run directory " + Describe(dir) + ": " +
               std::strerror(errno);
    }
  }
  if (mkdir(dir.path.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create run directory " + Describe(dir) + ": " + std::strerror(errno);
  struct stat st;
  if (lstat(dir.path.c_str(), &st) != 0)
    return "run directory " + Describe(dir) + ": " + std::strerror(errno);
  return CheckExisting(dir, st);
}

std::string CheckFabricName(const std::string& name) {
  if (name.empty()) return "a fabric name cannot be empty";
  if (name.size() > 64) return "fabric name '" + name + "' is longer than 64 characters";
  if (name[0] == '.' || name[0] == '-')
    return "fabric name '" + name + "' must start with a letter, a digit or '_'";
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
      return "fabric name '" + name + "' may hold only letters, digits, '.', '_' and '-'";
  return "";
}

FabricFiles FilesOf(const std::string& dir, const std::string& name) {
  std::string base = dir + "/" + name;
  return {base + ".lock", base + ".json", base + ".sock", base + ".umad.sock",
          base + ".umad.direct"};
}

std::string IpcEndpoint(const std::string& socket_path, std::string* err) {
  if (socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    *err = "socket path " + socket_path + " is longer than the " +
           std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
           " bytes a Unix socket allows; use a shorter run directory (IBEMU_RUN_DIR) or --name";
    return "";
  }
  return "ipc://" + socket_path;
}

}  // namespace ibemu::transport
