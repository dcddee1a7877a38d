// Progress of a long verb (sweep, tune, compare, calibrate) on stderr: items done of total,
// elapsed time and an estimate of the time left (elapsed / done x items left), redrawn in place.
// Only when stderr is a terminal and --quiet is not given: a log or a pipe gets nothing, so
// output stays byte-identical whatever the terminal. The line is erased when the work ends.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace tilesim::cli {

class TerminalProgress {
 public:
  TerminalProgress(std::string what, bool quiet);  // what: "candidates", "GPU counts"
  ~TerminalProgress();
  TerminalProgress(const TerminalProgress&) = delete;
  TerminalProgress& operator=(const TerminalProgress&) = delete;

  bool enabled() const { return enabled_; }
  void update(std::size_t done, std::size_t total);

 private:
  std::string what_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace tilesim::cli
