// Symmetric simulation (sim/scenario/symmetric_plan.hpp, sim/model/ring_symmetry.hpp): one
// rank per class of the ring's shift symmetry, flows with their class's multiplicities, gives
// the same result JSON as simulating every rank, byte for byte (makespan and every rank's
// totals to the picosecond and the byte), on the shipped H100 cluster (NVLink inside a node,
// rail-optimised InfiniBand across, so transfers contend on shared links) at 8 to 256 GPUs.
// The reference is the full simulation of the full plan, an independent path (the full
// generator, every rank's flows over their own links). Two keys differ by design and are
// left out of the comparison: plan_digest (a digest of the plan actually simulated; the full
// plan is never built on the symmetric path) and symmetry (present only there).
// Where no shift is a symmetry, symmetry falls back to the full simulation.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/result_json.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/verbs/simulate_verb.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

std::string without_plan_identity(nlohmann::ordered_json j) {
  j.erase("plan_digest");
  j.erase("symmetry");
  return j.dump(2);
}

}  // namespace

TEST_CASE("symmetric simulation equals the full simulation byte for byte") {
  for (int gpus : {8, 16, 32, 64, 128, 256}) {
    for (const std::string kind : {"ring", "zigzag", "striped"}) {
      const std::vector<std::string> sets = {"schedule.gpus=" + std::to_string(gpus),
                                             "attention.seq_len=" + std::to_string(1024 * gpus),
                                             "schedule.kind=" + kind};
      INFO(kind << " on " << gpus << " GPUs");
      const PreparedScenario p = prepare_scenario(kScenario, sets);
      const std::optional<RingSymmetry> symmetry =
          scenario_symmetry(p.scenario, p.topology, p.profile);
      REQUIRE(symmetry.has_value());
      // prepare_scenario found the same symmetry, once, for its resource guard and the verb.
      REQUIRE(p.symmetry.has_value());
      CHECK(p.symmetry->classes == symmetry->classes);
      CHECK(p.symmetry->link_canonical == symmetry->link_canonical);
      // One node (NVSwitch): a shift by 2 GPUs maps the ring onto itself; across nodes a
      // shift by one node (the inter-node hop relays over NVLink to the GPU on the
      // destination's rail, which maps to the shifted rank's GPU).
      REQUIRE(symmetry->exact());
      CHECK(symmetry->classes == (gpus == 8 ? 2 : 8));
      CHECK(gpus % symmetry->classes == 0);
      const Plan quotient = build_symmetric_plan(p.scenario, *symmetry);
      CHECK(quotient.ranks == symmetry->classes);
      const SimulationResult sym = simulate_classes(quotient, *symmetry, p.topology, p.profile);

      const Plan full_plan = build_valid_plan(p.scenario);
      const SimulationResult full = simulate(full_plan, p.topology, p.profile);
      REQUIRE(sym.ranks.size() == full.ranks.size());
      CHECK(sym.makespan_ps == full.makespan_ps);
      CHECK(sym.events == full.events);
      CHECK(quotient.op_count() * static_cast<std::size_t>(gpus / quotient.ranks) ==
            full_plan.op_count());
      const ResultContext context{p.scenario.name, p.scenario.topology_path,
                                  p.scenario.calibration_path, false};
      nlohmann::ordered_json sym_json = result_to_json(quotient, sym, context);
      describe_full_ring(sym_json, quotient, *symmetry);
      CHECK(sym_json["symmetry"]["classes"] == symmetry->classes);
      CHECK(without_plan_identity(sym_json) ==
            without_plan_identity(result_to_json(full_plan, full, context)));
    }
  }
}

TEST_CASE("a placement or size that breaks the shift symmetry simulates every rank") {
  const PreparedScenario p = prepare_scenario(kScenario, {"schedule.gpus=8"});
  // One node: the identity placement has a shift by 2.
  std::vector<int> placement = {0, 1, 2, 3, 4, 5, 6, 7};
  CHECK(find_ring_symmetry(p.topology, placement, 8, false).classes == 2);
  // Ranks 0..6 on node 0 and rank 7 on node 1 (GPU 8): the ring's two InfiniBand hops are
  // 6 -> 7 and 7 -> 0, and no shift by 2 or 4 maps them onto InfiniBand hops.
  const PreparedScenario two_nodes = prepare_scenario(kScenario, {"schedule.gpus=16"});
  placement = {0, 1, 2, 3, 4, 5, 6, 8};
  CHECK(find_ring_symmetry(two_nodes.topology, placement, 8, false).classes == 8);
  CHECK_FALSE(find_ring_symmetry(two_nodes.topology, placement, 8, false).exact());
  // 12 GPUs: 1.5 nodes; no shift dividing 12 keeps a node's ranks in one block.
  const PreparedScenario twelve = prepare_scenario(kScenario, {"schedule.gpus=12"});
  const auto twelve_sym = scenario_symmetry(twelve.scenario, twelve.topology, twelve.profile);
  REQUIRE(twelve_sym.has_value());
  CHECK(twelve_sym->classes == 12);
  CHECK_FALSE(twelve_sym->exact());
  // A causal mask makes rank r's steps cost differently from rank r + K's.
  const PreparedScenario causal =
      prepare_scenario(kScenario, {"schedule.gpus=16", "attention.causal=true"});
  CHECK_FALSE(scenario_symmetry(causal.scenario, causal.topology, causal.profile).has_value());
  // Switched off.
  const PreparedScenario off =
      prepare_scenario(kScenario, {"schedule.gpus=16", "schedule.symmetry=off"});
  CHECK_FALSE(scenario_symmetry(off.scenario, off.topology, off.profile).has_value());
}

TEST_CASE("a symmetric run names its quotient plan and counts the full plan's ops") {
  ScenarioSource source;
  source.path = kScenario;
  source.overrides = {"schedule.gpus=64", "attention.seq_len=64K"};
  const SimulationRun sym = run_simulation(source);
  REQUIRE(sym.symmetric());
  // The verb runs the symmetry prepare_scenario found (not a second search).
  REQUIRE(sym.prepared.symmetry.has_value());
  CHECK(sym.symmetry->classes == sym.prepared.symmetry->classes);
  CHECK(sym.quotient_plan().ranks == 8);
  CHECK(sym.simulated_group_plan.ranks == 8);
  CHECK_THROWS_AS(sym.full_plan(), std::logic_error);

  SimulateRequest every_rank;
  every_rank.no_symmetry = true;
  const SimulationRun full = run_simulation(source, every_rank);
  CHECK_FALSE(full.symmetric());
  CHECK_THROWS_AS(full.quotient_plan(), std::logic_error);
  REQUIRE(full.full_plan().ranks == 64);
  // The full generator's op count is the reference for the count read off the quotient.
  CHECK(sym.full_plan_ops() == full.full_plan().op_count());
  CHECK(full.full_plan_ops() == full.full_plan().op_count());

  // Op records need every rank: the run is not symmetric although the symmetry is exact.
  const SimulationRun per_op = run_simulation(source, SimulateRequest{.per_op = true});
  CHECK_FALSE(per_op.symmetry.has_value());
  REQUIRE(per_op.prepared.symmetry.has_value());
  CHECK(per_op.prepared.symmetry->exact());
  CHECK(per_op.full_plan().ranks == 64);
}
