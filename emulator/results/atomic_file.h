// A results file that is either complete or absent: written under a temporary name beside its
// final one and renamed into place only once every byte is on disk. A run that crashes, is
// killed or fills the disk halfway leaves no file that looks complete (rename(2) within one
// directory is atomic).
#pragma once
#include <fstream>
#include <string>

namespace ibemu::results {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  // Removes the temporary file unless Commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& out() { return out_; }
  // Where a program that writes the file itself (gnuplot) should write it.
  const std::string& temp_path() const { return tmp_; }
  // Flushes, checks that every write succeeded, and renames into place. Throws with the file's
  // name and the reason when it cannot.
  void Commit();
  // For a file written by another program at temp_path(): renames it into place if it exists.
  bool CommitWrittenByOther();

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace ibemu::results
