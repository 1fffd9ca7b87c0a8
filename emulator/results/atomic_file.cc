#include "emulator/results/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ibemu::results {

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(getpid())) {
  out_.open(tmp_, std::ios::out | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write " + tmp_ + ": " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) std::remove(tmp_.c_str());
}

void AtomicFile::Commit() {
  out_.flush();
  bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok || out_.fail())
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp_ + " to " + path_ + ": " +
                             std::strerror(errno));
  committed_ = true;
}

bool AtomicFile::CommitWrittenByOther() {
  out_.close();
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) return false;
  committed_ = true;
  return true;
}

}  // namespace ibemu::results
