#include "emulator/fabric/fabric_instance.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

namespace ibemu::fabric {
namespace {

struct flock WholeFile(short type) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 0;
  return fl;
}

// Whether some open file description holds a lock on `path` (false when the file is missing).
// F_OFD_GETLK only asks, so probing never gets in the way of an instance claiming the name.
bool LockHeld(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock fl = WholeFile(F_WRLCK);
  bool held = fcntl(fd, F_OFD_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
  close(fd);
  return held;
}

nlohmann::json ReadState(const std::string& path) {
  std::ifstream in(path);
  if (!in) return nullptr;
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json() : j;
}

void RemoveIfPresent(const std::string& path) {
  if (unlink(path.c_str()) != 0 && errno != ENOENT)
    std::fprintf(stderr, "ibemu: warning: cannot remove %s: %s\n", path.c_str(),
                 std::strerror(errno));
}

}  // namespace

std::unique_ptr<FabricInstance> FabricInstance::Claim(const transport::RunDir& dir,
                                                      const std::string& name, std::string* err,
                                                      std::string* note) {
  transport::FabricFiles files = transport::FilesOf(dir.path, name);
  // The lock file of a predecessor that is letting go may be unlinked between our open() and our
  // lock: then we hold a lock nobody else can see. Lock, then check that the path still names the
  // file we locked; if not, start again on the new one.
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = open(files.lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      *err = "cannot open " + files.lock + ": " + std::strerror(errno);
      return nullptr;
    }
    struct flock fl = WholeFile(F_WRLCK);
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
      int e = errno;
      close(fd);
      if (e != EAGAIN && e != EACCES) {
        *err = "cannot lock " + files.lock + ": " + std::strerror(e);
        return nullptr;
      }
      nlohmann::json st = ReadState(files.state);
      int pid = st.is_object() ? st.value("pid", 0) : 0;
      *err = "a fabric named '" + name + "' is already up" +
             (pid ? " (pid " + std::to_string(pid) + ")" : std::string(" (starting)")) + " in " +
             dir.path + "; bring it down with `ibemu down" +
             (name == "default" ? "" : " --name " + name) +
             "` or start this one with another --name";
      return nullptr;
    }
    struct stat held, now;
    if (fstat(fd, &held) != 0 || stat(files.lock.c_str(), &now) != 0 || held.st_ino != now.st_ino ||
        held.st_dev != now.st_dev) {
      close(fd);
      continue;
    }
    auto inst = std::unique_ptr<FabricInstance>(new FabricInstance(files, fd));
    nlohmann::json old = ReadState(files.state);
    struct stat sb;
    bool leftovers = !old.is_null() || lstat(files.service.c_str(), &sb) == 0 ||
                     lstat(files.umad.c_str(), &sb) == 0 || lstat(files.direct.c_str(), &sb) == 0;
    if (leftovers) {
      int pid = old.is_object() ? old.value("pid", 0) : 0;
      *note = "removed the files of a fabric named '" + name + "'" +
              (pid ? " (pid " + std::to_string(pid) + ")" : std::string()) +
              " that ended without going down";
      inst->RemoveFiles();
    }
    return inst;
  }
  *err = "cannot claim " + files.lock + ": it keeps being replaced";
  return nullptr;
}

FabricInstance::~FabricInstance() {
  RemoveFiles();
  // Unlinked while still locked: a successor either opens the old file (and finds it unlinked
  // after locking, so retries) or creates a new one.
  unlink(files_.lock.c_str());
  close(fd_);
}

void FabricInstance::RemoveFiles() {
  RemoveIfPresent(files_.state);
  RemoveIfPresent(files_.state + ".tmp");
  RemoveIfPresent(files_.service);
  RemoveIfPresent(files_.umad);
  RemoveIfPresent(files_.direct);
}

void FabricInstance::RemoveState() {
  RemoveIfPresent(files_.state);
}

void FabricInstance::WriteState(const nlohmann::json& state) {
  std::string tmp = files_.state + ".tmp";
  {
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    std::string text = state.dump(2) + "\n";
    bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ok = close(fd) == 0 && ok;
    if (!ok) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  }
  if (rename(tmp.c_str(), files_.state.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + ": " + std::strerror(errno));
}

void FabricInstance::MakePrivate(const std::string& path) {
  if (chmod(path.c_str(), 0600) != 0)
    throw std::runtime_error("cannot restrict " + path + " to its owner: " + std::strerror(errno));
}

FabricProbe ProbeFabric(const transport::RunDir& dir, const std::string& name) {
  transport::FabricFiles files = transport::FilesOf(dir.path, name);
  FabricProbe p;
  // Read the state before asking about the lock: an instance publishes its state only while it
  // holds the lock, so "state, then no lock" can only mean it died (or just went down).
  p.info = ReadState(files.state);
  if (LockHeld(files.lock)) {
    p.state = FabricProbe::State::kLive;
  } else if (!p.info.is_null()) {
    // It may have gone down cleanly between the two reads: then the state is gone too.
    struct stat sb;
    p.state = lstat(files.state.c_str(), &sb) == 0 ? FabricProbe::State::kDead
                                                   : FabricProbe::State::kAbsent;
  }
  return p;
}

int WatchProcess(const transport::RunDir& dir, const std::string& name, int pid) {
  if (pid <= 0) return -1;
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return -1;
  // The lock still held after the pidfd was taken: `pid` is the instance, not a reused number.
  if (!LockHeld(transport::FilesOf(dir.path, name).lock)) {
    close(fd);
    return -1;
  }
  return fd;
}

bool WaitUntilGone(const transport::RunDir& dir, const std::string& name, int pidfd,
                   std::chrono::milliseconds timeout) {
  std::string lock = transport::FilesOf(dir.path, name).lock;
  auto until = std::chrono::steady_clock::now() + timeout;
  if (pidfd >= 0) {
    // A pidfd becomes readable when its process has ended (a zombie to its parent): later than
    // the lock's release, which happens as the process closes its files on the way out.
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    struct pollfd p {
      pidfd, POLLIN, 0
    };
    int r;
    do {
      r = poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    } while (r < 0 && errno == EINTR);
    if (r <= 0) return false;
  }
  for (;;) {
    if (!LockHeld(lock)) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace ibemu::fabric
