// Errors in user input (YAML files, --set overrides, CLI values).
// Every bad input is reported as file:line: key: what was expected, and the CLI
// turns an InputError into exit code 2. Line is 1-based; 0 means "not known"
// (for example a value that came from the command line).
#pragma once

#include <stdexcept>
#include <string>

namespace tilesim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string key, std::string expected);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& expected() const { return expected_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string expected_;
};

}  // namespace tilesim
