// AtomicFile and AtomicFileSet: the target holds the old or the whole new content, never a
// prefix, and no temporary outlives its writer.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"

namespace fs = std::filesystem;
using namespace tilesim;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tilesim-atomic-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

std::size_t entries(const fs::path& dir) {
  return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {}));
}

}  // namespace

TEST_CASE("a committed file replaces the old one and leaves no temporary") {
  const fs::path dir = fresh_dir("commit");
  write(dir / "out.json", "old");
  {
    AtomicFile f((dir / "out.json").string(), "--out");
    f.stream() << "new content";
    CHECK(read(dir / "out.json") == "old");  // not visible before commit
    CHECK(fs::exists(f.temporary_path()));
    CHECK(fs::path(f.temporary_path()).parent_path() == dir);  // same file system: atomic rename
    f.commit();
  }
  CHECK(read(dir / "out.json") == "new content");
  CHECK(entries(dir) == 1);
  // The mode a plain create gives (0666 less the umask), not mkstemp's 0600.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  const auto perms = fs::status(dir / "out.json").permissions();
  CHECK(static_cast<unsigned>(perms) == (0666u & ~static_cast<unsigned>(mask)));
}

TEST_CASE("a file destroyed without commit keeps the old content and removes its temporary") {
  const fs::path dir = fresh_dir("abandon");
  write(dir / "out.json", "old");
  try {
    AtomicFile f((dir / "out.json").string(), "--out");
    f.stream() << "half of a";
    throw std::runtime_error("the writer failed part way");
  } catch (const std::runtime_error&) {
  }
  CHECK(read(dir / "out.json") == "old");
  CHECK(entries(dir) == 1);
}

TEST_CASE("an unwritable directory is an InputError naming the file and the option") {
  try {
    AtomicFile f("/nonexistent-dir/out.json", "--trace");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.file() == "/nonexistent-dir/out.json");
    CHECK(e.key() == "--trace");
  }
}

TEST_CASE("a set commits every file or none") {
  const fs::path dir = fresh_dir("set");
  write(dir / "a.yaml", "old a");
  write(dir / "b.yaml", "old b");
  {
    AtomicFileSet files;
    files.add((dir / "a.yaml").string(), "").stream() << "new a";
    files.add((dir / "b.yaml").string(), "").stream() << "new b";
    // Abandoned (no commit_all): both keep their content.
  }
  CHECK(read(dir / "a.yaml") == "old a");
  CHECK(read(dir / "b.yaml") == "old b");
  CHECK(entries(dir) == 2);
  AtomicFileSet files;
  files.add((dir / "a.yaml").string(), "").stream() << "new a";
  files.add((dir / "b.yaml").string(), "").stream() << "new b";
  files.commit_all();
  CHECK(read(dir / "a.yaml") == "new a");
  CHECK(read(dir / "b.yaml") == "new b");
  CHECK(entries(dir) == 2);
}

TEST_CASE("a pending SIGINT stops the commit and the old files stay") {
  const fs::path dir = fresh_dir("interrupt");
  write(dir / "a.yaml", "old a");
  const InterruptGuard guard;
  CHECK(pending_interrupt() == 0);
  std::raise(SIGINT);  // recorded by the guard's handler, not fatal
  CHECK(pending_interrupt() == SIGINT);
  AtomicFileSet files;
  files.add((dir / "a.yaml").string(), "").stream() << "new a";
  try {
    files.commit_all();
    FAIL("commit went ahead");
  } catch (const Interrupted& e) {
    CHECK(e.signal() == SIGINT);
    CHECK(std::string(e.what()).find("no output file was changed") != std::string::npos);
  }
  CHECK(read(dir / "a.yaml") == "old a");
}
