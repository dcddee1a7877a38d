#include "tools/cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace tilesim::cli {

TerminalProgress::TerminalProgress(std::string what, bool quiet)
    : what_(std::move(what)),
      enabled_(!quiet && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {}

TerminalProgress::~TerminalProgress() {
  if (drawn_) std::fputs("\r\x1b[K", stderr);  // erase the line: results follow on stdout
}

void TerminalProgress::update(std::size_t done, std::size_t total) {
  if (!enabled_ || total == 0) return;
  if (done >= total) {  // the work is over: leave the terminal as it was
    if (drawn_) std::fputs("\r\x1b[K", stderr);
    drawn_ = false;
    return;
  }
  const double elapsed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double left_s =
      done == 0 ? 0.0 : elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  fmt::print(stderr, "\r\x1b[K{} of {} {}, {:.1f} s elapsed, about {:.1f} s left", done, total,
             what_, elapsed_s, left_s);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace tilesim::cli
