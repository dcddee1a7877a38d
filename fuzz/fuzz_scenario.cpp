// Scenario YAML plus --set overrides: "<yaml>\0<override>\0<override>..." (up to 4 overrides).
// Loads, prepares (topology, profile) and builds and validates the plan under a small op limit,
// so that every exec stays short; a plan the generator gets wrong is a logic_error and a report.
#include "fuzz/fuzz_support.hpp"
#include "sim/scenario/prepared_scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tilesim;
  std::vector<std::string> parts = fuzz::split_nul(data, size, 5);
  const std::string yaml = parts.front();
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  const std::string path = fuzz::scratch().write(
      "scenario.yaml", reinterpret_cast<const std::uint8_t*>(yaml.data()), yaml.size());
  fuzz::expect_typed_errors([&] {
    ResourceLimits limits;
    limits.max_ops = 20000;
    limits.max_memory_bytes = 256e6;
    const PreparedScenario p = prepare_scenario(path, overrides, limits);
    build_valid_plan(p.scenario);
  });
  return 0;
}
