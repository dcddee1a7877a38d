#pragma once
// The GPU counts a simulation-equality test runs at. The environment variable
// TILESIM_TEST_MAX_GPUS drops the counts above it (tools/sanitize.sh sets 64 for the ASan +
// UBSan suite): the generators and the simulator take the same code paths at 64 GPUs as at 256
// (every count here is within one leaf group of the H100 cluster), while a 256-GPU equality
// test costs 20-50x its Release time under the sanitizers, most of that stage's time. The
// Release suite runs every count. The smallest count always stays, so no test runs empty.
#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

namespace tilesim::test {

// Whether TILESIM_TEST_MAX_GPUS is set: a test that counts the cases it ran checks the exact
// count only when every count ran.
inline bool gpu_counts_capped() {
  const char* cap_text = std::getenv("TILESIM_TEST_MAX_GPUS");
  return cap_text != nullptr && *cap_text != '\0';
}

inline std::vector<int> gpu_counts(std::initializer_list<int> counts) {
  std::vector<int> kept(counts);
  if (!gpu_counts_capped()) return kept;
  const char* cap_text = std::getenv("TILESIM_TEST_MAX_GPUS");
  std::size_t parsed = 0;
  int cap = 0;
  try {
    cap = std::stoi(cap_text, &parsed);
  } catch (const std::exception&) {
    parsed = 0;
  }
  if (parsed == 0 || cap_text[parsed] != '\0' || cap <= 0) {
    throw std::invalid_argument(
        std::string("TILESIM_TEST_MAX_GPUS: expected a positive integer, got '") + cap_text + "'");
  }
  const int smallest = *std::min_element(kept.begin(), kept.end());
  std::erase_if(kept, [&](int gpus) { return gpus > cap && gpus != smallest; });
  return kept;
}

}  // namespace tilesim::test
