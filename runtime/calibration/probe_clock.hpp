#pragma once
// The clock every calibration probe times with: steady (never adjusted while a probe runs),
// read in seconds as a double.
#include <chrono>

namespace tilesim::runtime {

using ProbeClock = std::chrono::steady_clock;

inline double seconds_since(ProbeClock::time_point start) {
  return std::chrono::duration<double>(ProbeClock::now() - start).count();
}

}  // namespace tilesim::runtime
