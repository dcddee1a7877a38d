// The shared setup of the symmetric-simulation equality tests (test_symmetric_simulation.cpp,
// test_mesh_symmetry.cpp, test_double_ring_symmetry.cpp, test_usp_symmetry.cpp): a scenario
// prepared with overrides, its shift symmetry, and the comparison of the quotient's result
// JSON with the full simulation's.
//
// The reference is the full simulation of the full plan, an independent path (the full
// generator, every rank's flows over their own links). Two keys differ by design and are left
// out of the comparison: plan_digest (a digest of the plan actually simulated; the full plan
// is never built on the symmetric path) and symmetry (present only there).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/model/ring_symmetry.hpp"
#include "sim/scenario/prepared_scenario.hpp"

namespace tilesim::test {

// A shipped scenario, by its path under scenarios/.
std::string shipped_scenario(const std::string& name);

// gpus, seq_len = 1024 x gpus (so every size runs the same per-rank chunk), the pass, and
// the extra overrides.
std::vector<std::string> scale_overrides(int gpus, const std::string& pass,
                                         std::vector<std::string> extra);

struct SymmetryCase {
  PreparedScenario prepared;
  std::optional<RingSymmetry> symmetry;  // scenario_symmetry's answer
};

SymmetryCase symmetry_case(const std::string& scenario, const std::vector<std::string>& overrides);

// For an exact symmetry: simulates the quotient (build_symmetric_plan, simulate_classes) and
// the full plan (build_valid_plan, simulate) and CHECKs that the makespan and event count are
// equal, that the quotient's ops times P / K are the full plan's, that the symmetric JSON
// names its classes, and that the two result JSONs are byte-identical but for plan_digest and
// symmetry. Call it inside the test case (it uses Catch2's CHECK).
void check_symmetric_equals_full(const SymmetryCase& c);

}  // namespace tilesim::test
