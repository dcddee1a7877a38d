#include "sim/core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"

namespace tilesim {
namespace {

std::string directory_of(const std::string& path) {
  const std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

AtomicFile::AtomicFile(std::string path, std::string key)
    : path_(std::move(path)), key_(std::move(key)) {
  const std::filesystem::path p(path_);
  // Hidden and next to the target: same file system, so rename() is atomic.
  std::string pattern =
      (std::filesystem::path(directory_of(path_)) / ("." + p.filename().string() + ".tmp-XXXXXX"))
          .string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) {
    throw InputError(path_, 0, key_, "a file in a writable directory (" + errno_text() + ")");
  }
  // mkstemp makes it 0600; give it the mode a plain create would (0666 less the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  ::close(fd);
  temporary_ = name.data();
  out_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    ::unlink(temporary_.c_str());
    throw InputError(path_, 0, key_, "a file in a writable directory");
  }
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  out_.close();
  ::unlink(temporary_.c_str());
}

void AtomicFile::sync() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written || out_.fail()) {
    throw InputError(path_, 0, key_, "room to write the whole file (write failed)");
  }
  const int fd = ::open(temporary_.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = errno_text();
    if (fd >= 0) ::close(fd);
    throw InputError(path_, 0, key_, "a file that can be synced to disk (" + why + ")");
  }
  ::close(fd);
}

void AtomicFile::publish() {
  if (std::rename(temporary_.c_str(), path_.c_str()) != 0) {
    throw InputError(path_, 0, key_,
                     "a path the new file can be renamed to (" + errno_text() + ")");
  }
  committed_ = true;
  // The rename is durable once the directory entry is.
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void AtomicFile::commit() {
  sync();
  throw_if_interrupted();
  publish();
}

AtomicFile& AtomicFileSet::add(std::string path, std::string key) {
  files_.push_back(std::make_unique<AtomicFile>(std::move(path), std::move(key)));
  return *files_.back();
}

void AtomicFileSet::commit_all() {
  for (auto& f : files_) f->sync();
  throw_if_interrupted();
  for (auto& f : files_) f->publish();
}

}  // namespace tilesim
