// Symmetric simulation of the double ring (sim/scenario/symmetric_plan.hpp): one rank per
// class of a shift by whole inner rings gives the same result JSON as simulating every rank,
// byte for byte, on 8 to 256 GPUs of the shipped H100 cluster (forward, full mask), with the
// inner ring a node (the default) and half a node. plan_digest and symmetry differ by design
// (tests/test_symmetric_simulation.cpp says why).
//
// The classes expected, by hand: rank r's peers are its inner successor (inside its inner
// ring of k ranks) and its outer successor r + k (mod P); r -> r + K maps the programs onto
// themselves when k divides K, and the outer peer does not fold onto r itself (K does not
// divide k) unless there is one inner ring only (no outer peer). Across nodes of one leaf
// group (up to 256 GPUs) K must move whole nodes (a multiple of 8: the inter-node route relays
// over NVLink to the GPU on the destination's rail). The smallest such K dividing P below P is
// the class count, else P.
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

std::string without_plan_identity(nlohmann::ordered_json j) {
  j.erase("plan_digest");
  j.erase("symmetry");
  return j.dump(2);
}

int expected_classes(int gpus, int inner) {
  const int step = gpus > 8 ? std::lcm(inner, 8) : inner;
  const bool outer_peer = gpus > inner;
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0 && !(outer_peer && inner % k == 0)) return k;
  }
  return gpus;
}

}  // namespace

TEST_CASE("the rule for double-ring classes on the H100 cluster, by hand") {
  CHECK(expected_classes(8, 8) == 8);    // one inner ring, and no K < 8 moves a whole one
  CHECK(expected_classes(8, 4) == 8);    // K = 4 folds the outer peer r + 4 onto r
  CHECK(expected_classes(16, 8) == 16);  // K = 8 folds the outer peer likewise
  CHECK(expected_classes(16, 4) == 8);
  // K = 8 (one node) would fold the outer successor, on the next node, onto r: two nodes.
  CHECK(expected_classes(256, 8) == 16);
}

TEST_CASE("symmetric double-ring simulation equals the full simulation byte for byte") {
  int exact_runs = 0;
  for (int gpus : {8, 16, 32, 64, 128, 256}) {
    for (int inner : {8, 4}) {
      INFO("double_ring inner " << inner << " on " << gpus << " GPUs");
      const PreparedScenario p = prepare_scenario(
          kScenario, {"schedule.gpus=" + std::to_string(gpus),
                      "attention.seq_len=" + std::to_string(1024 * gpus),
                      "schedule.kind=double_ring", "schedule.inner=" + std::to_string(inner)});
      const std::optional<RingSymmetry> symmetry =
          scenario_symmetry(p.scenario, p.topology, p.profile);
      REQUIRE(symmetry.has_value());
      CHECK(symmetry->classes == expected_classes(gpus, inner));
      if (!symmetry->exact()) continue;
      ++exact_runs;
      const Plan quotient = build_symmetric_plan(p.scenario, *symmetry);
      CHECK(quotient.ranks == symmetry->classes);
      const SimulationResult sym = simulate_classes(quotient, *symmetry, p.topology, p.profile);
      const Plan full_plan = build_valid_plan(p.scenario);
      const SimulationResult full = simulate(full_plan, p.topology, p.profile);
      CHECK(sym.makespan_ps == full.makespan_ps);
      CHECK(sym.events == full.events);
      const ResultContext context{p.scenario.name, p.scenario.topology_path,
                                  p.scenario.calibration_path, false};
      nlohmann::ordered_json sym_json = result_to_json(quotient, sym, context);
      describe_full_ring(sym_json, quotient, *symmetry);
      CHECK(without_plan_identity(sym_json) ==
            without_plan_identity(result_to_json(full_plan, full, context)));
    }
  }
  CHECK(exact_runs == 9);  // every size but 8 (both inners) and 16 with inner 8
}
