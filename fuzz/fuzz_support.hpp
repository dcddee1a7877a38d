// Shared by the libFuzzer targets: a scratch tree in which a fuzzed file can name the shipped
// topologies and profiles by the same relative paths as the shipped files, and the rule every
// target checks: a bad input ends in the library's typed error, anything else escapes and
// libFuzzer reports it (an uncaught exception aborts), as it does a crash, leak, hang or UB.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"

namespace tilesim::fuzz {

// <tmp>/tilesim-fuzz-<pid>/{scenarios,topologies,validation,regress}, the shipped directories
// linked in as <tmp>/.../shipped-*; a fuzzed file is written as <dir>/fuzz.yaml where
// `../topologies/h100-cluster.yaml` resolves to the shipped topology.
class ScratchTree {
 public:
  ScratchTree() {
    root_ = std::filesystem::temp_directory_path() / ("tilesim-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(root_);
    const std::filesystem::path source(TILESIM_SOURCE_DIR);
    for (const char* dir : {"topologies", "scenarios", "validation"}) {
      std::error_code ec;
      std::filesystem::create_directory_symlink(source / dir, root_ / dir, ec);
    }
    std::filesystem::create_directories(root_ / "work");
  }
  ~ScratchTree() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  // A file next to the shipped directories (so "../topologies/x.yaml" resolves).
  std::string write(std::string_view name, const std::uint8_t* data, std::size_t size) const {
    const std::string path = (root_ / "work" / std::string(name)).string();
    // A new file, not the old one truncated: ext4 flushes a file truncated to zero when it is
    // closed (auto_da_alloc), which cost each exec a disk write (~10% of a scenario exec).
    std::error_code ec;
    std::filesystem::remove(path, ec);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
  }

 private:
  std::filesystem::path root_;
};

inline const ScratchTree& scratch() {
  static const ScratchTree tree;  // one per fuzzing process; removed at exit
  return tree;
}

// Splits "<file>\0<a>\0<b>..." into the file's bytes and up to `max_extra` extra strings.
inline std::vector<std::string> split_nul(const std::uint8_t* data, std::size_t size,
                                          std::size_t max_parts) {
  std::vector<std::string> parts(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0 && parts.size() < max_parts) {
      parts.emplace_back();
    } else {
      parts.back().push_back(static_cast<char>(data[i]));
    }
  }
  return parts;
}

// Runs `body`; the typed input errors are the expected outcome of a bad input.
template <typename Body>
void expect_typed_errors(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  } catch (const SimulatedRangeError&) {
  }
}

}  // namespace tilesim::fuzz
