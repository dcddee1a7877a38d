// Maps failures to exit codes: bad input (InputError, bad command-line
// arguments) -> 2 with "error: file:line: key 'k': expected ..." on stderr;
// a simulated time past the simulator's range (SimulatedRangeError: absurd sizes or
// bandwidths) -> 2 as well; SIGINT/SIGTERM (Interrupted, sim/core/interrupt.hpp) -> 128 + signal
// with "tilesim: interrupted by SIGINT; no output file was changed"; anything else -> 1 ("internal
// error"), so a bug never looks like bad input.
#pragma once

#include <functional>

namespace tilesim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

int run_guarded(const std::function<int()>& body);

}  // namespace tilesim::cli
