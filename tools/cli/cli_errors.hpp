// Maps failures to exit codes: bad input (InputError, bad command-line
// arguments) -> 2 with "error: file:line: key 'k': expected ..." on stderr;
// a simulated time past the simulator's range (SimulatedRangeError: absurd sizes or
// bandwidths) -> 2 as well; anything else -> 1 ("internal error"), so a bug never looks like bad
// input.
#pragma once

#include <functional>

namespace tilesim::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;

int run_guarded(const std::function<int()>& body);

}  // namespace tilesim::cli
