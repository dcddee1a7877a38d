// An output file that appears whole or not at all.
//
// AtomicFile writes to a temporary file in the target's directory (so the final rename stays on
// one file system and is atomic under POSIX), and commit() flushes, fsyncs, renames it onto the
// target and fsyncs the directory. Destroyed without commit (an exception, an interrupt), it
// unlinks the temporary, so a reader sees either the previous file or the complete new one,
// never a prefix. commit() refuses while an interrupt is pending (sim/core/interrupt.hpp).
// Errors are InputError naming the target path and `key` (the option that named it).
#pragma once

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace tilesim {

class AtomicFile {
 public:
  AtomicFile(std::string path, std::string key);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& path() const { return path_; }
  const std::string& temporary_path() const { return temporary_; }
  // Makes the content the target's. Throws InputError when it cannot, Interrupted when a
  // signal arrived; either way the target keeps its previous content.
  void commit();

 private:
  friend class AtomicFileSet;
  void sync();     // flush, check, close and fsync the temporary
  void publish();  // rename onto the target, fsync the directory

  std::string path_;
  std::string key_;
  std::string temporary_;
  std::ofstream out_;
  bool committed_ = false;
};

// Writes several files all or nothing: every content is written and synced to its temporary
// first, and only when all succeeded are they renamed into place (renames cannot fail halfway
// for lack of space; the window between renames is microseconds and holds no signal check).
class AtomicFileSet {
 public:
  AtomicFile& add(std::string path, std::string key);
  void commit_all();

 private:
  std::vector<std::unique_ptr<AtomicFile>> files_;
};

}  // namespace tilesim
