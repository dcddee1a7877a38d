#pragma once
// Uniform integers for the tests' random instances, from the raw engine's output (which the
// standard fixes, unlike std::uniform_int_distribution's), so that a seed gives the same
// instance with every standard library.
#include <cstdint>
#include <random>

namespace tilesim::test {

// Uniform integer in [lo, hi] (the modulo bias is irrelevant for test instances).
inline int pick(std::mt19937_64& rng, int lo, int hi) {
  return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1));
}

}  // namespace tilesim::test
