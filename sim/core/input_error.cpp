#include "sim/core/input_error.hpp"

#include <fmt/format.h>

namespace tilesim {
namespace {
std::string format_message(const std::string& file, int line, const std::string& key,
                           const std::string& expected) {
  std::string where = file.empty() ? std::string("<input>") : file;
  if (line > 0) where += fmt::format(":{}", line);
  if (key.empty()) return fmt::format("{}: {}", where, expected);
  return fmt::format("{}: key '{}': {}", where, key, expected);
}
}  // namespace

InputError::InputError(std::string file, int line, std::string key, std::string expected)
    : std::runtime_error(format_message(file, line, key, expected)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      expected_(std::move(expected)) {}

}  // namespace tilesim
