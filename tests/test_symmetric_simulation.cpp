// Symmetric simulation (sim/scenario/symmetric_plan.hpp, sim/model/ring_symmetry.hpp): one
// rank per class of the ring's shift symmetry, flows with their class's multiplicities, gives
// the same result JSON as simulating every rank, byte for byte (makespan and every rank's
// totals to the picosecond and the byte), on the shipped H100 cluster (NVLink inside a node,
// rail-optimised InfiniBand across, so transfers contend on shared links) at 8 to 256 GPUs,
// forward, backward and both, for ring, zigzag and striped (the comparison and what it leaves
// out: tests/symmetry_fixture.hpp). Where no shift is a symmetry, symmetry falls back to the
// full simulation; pass_q, allgather_kv and ulysses, in which every rank sends to every other,
// need the offset quotient (tests/test_all_peers_symmetry.cpp).
#include <catch2/catch.hpp>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/model/ring_symmetry.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kScenario = shipped_scenario("ring-256k.yaml");

// The ring's peer is r + 1. One node (NVSwitch star): every shift maps the ring's routes onto
// routes, and the smallest K dividing P below P is 2. Across nodes the inter-node hop relays
// over NVLink to the GPU on the destination's rail, which must map to the shifted rank's GPU:
// K moves whole nodes, 8. The backward's peers are the forward's (dKV follows KV to r + 1).
int expected_ring_classes(int gpus) { return gpus == 8 ? 2 : 8; }

}  // namespace

TEST_CASE("symmetric simulation equals the full simulation byte for byte") {
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (const std::string pass : {"forward", "backward", "both"}) {
      for (const std::string kind : {"ring", "zigzag", "striped"}) {
        INFO(kind << " on " << gpus << " GPUs, pass " << pass);
        const SymmetryCase c =
            symmetry_case(kScenario, scale_overrides(gpus, pass, {"schedule.kind=" + kind}));
        REQUIRE(c.symmetry.has_value());
        // prepare_scenario found the same symmetry, once, for its resource guard and the verb.
        REQUIRE(c.prepared.symmetry.has_value());
        CHECK(c.prepared.symmetry->classes == c.symmetry->classes);
        CHECK(c.prepared.symmetry->link_canonical == c.symmetry->link_canonical);
        CHECK(c.symmetry->classes == expected_ring_classes(gpus));
        check_symmetric_equals_full(c);
      }
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
  // A window likewise.
  const PreparedScenario window =
      prepare_scenario(kScenario, {"schedule.gpus=16", "attention.causal=true",
                                   "attention.mask=sliding_window", "attention.window=4096"});
  CHECK_FALSE(scenario_symmetry(window.scenario, window.topology, window.profile).has_value());
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

TEST_CASE("schedules whose ranks all send to one another need the offset quotient") {
  // pass-Q returns each partial to its owner r - s for every step s; all-gather KV and Ulysses
  // post one group in which every rank sends to every other. Under a shift by K < P the peer
  // r + K of representative r is played by r itself, so a quotient that folds each peer onto
  // the representative playing it cannot express them: the finder, given such peers, finds no
  // shift (here on one NVSwitch node, where every shift maps routes onto routes).
  const PreparedScenario node = prepare_scenario(kScenario, {"schedule.gpus=8"});
  RankPeers everyone(8);
  for (int r = 0; r < 8; ++r) {
    for (int t = 1; t < 8; ++t) everyone[static_cast<std::size_t>(r)].push_back((r + t) % 8);
  }
  ShiftSearch search;
  search.peers = everyone;
  CHECK(find_rank_shift_symmetry(node.topology, search).classes == 8);
  // With the ring's peer alone the same node has a shift by 2: the fold is the reason.
  CHECK(find_ring_symmetry(node.topology, {}, 8, false).classes == 2);
  // An offset quotient names full peers (class_plan.hpp keep_class_programs): without the fold
  // check the same peers have the ring's shift by 2, and symmetric_plan offers it to pass-Q and
  // all-gather KV (their equality with the full simulation: test_all_peers_symmetry.cpp).
  search.peers_by_offset = true;
  CHECK(find_rank_shift_symmetry(node.topology, search).classes == 2);
  for (const std::string kind : {"pass_q", "allgather_kv"}) {
    INFO(kind);
    const SymmetryCase c =
        symmetry_case(kScenario, scale_overrides(8, "forward", {"schedule.kind=" + kind}));
    REQUIRE(c.symmetry.has_value());
    CHECK(c.symmetry->classes == 2);
  }
}
