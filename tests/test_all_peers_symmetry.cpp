// Symmetric simulation of the schedules in which every rank sends to every other: pass-Q
// (forward; it has no backward) and all-gather KV (sim/scenario/symmetric_plan.hpp; Ulysses is
// left out, and checked to get no symmetry: its quotient was not exact).
// Their quotient keeps full peers (an offset quotient, sim/schedules/class_plan.hpp): the
// tracker pairs the send at offset t of class s with the recv at offset t of class
// (s + t) mod K, which may be s itself, and the transfer goes to the full peer's GPU. One rank
// per class gives the same result JSON as simulating every rank, byte for byte, on 8 to 256
// GPUs of the shipped H100 cluster (full mask), forward, backward and both where the schedule
// has them. The comparison and what it leaves out: tests/symmetry_fixture.hpp.
//
// The classes expected, by hand: every rank's peers are all the others, so a shift by K must
// map the route between every pair of ranks onto the route between their images. On one
// NVSwitch node every route is GPU -> switch -> GPU and every shift does: K = 2. Across the
// nodes of one leaf group (16 to 256 GPUs) an inter-node route relays over NVLink to the GPU
// on the destination's rail, which must map to the shifted rank's GPU: K moves whole nodes,
// 8 (the ring's rule; the ring's peer r + 1 is one of these peers, so no smaller K can do).
// Ulysses with KV replication rep = P / kv_heads (P > kv_heads) also needs K a multiple of
// rep: the rep ranks that share a KV head play different parts in its dKV sum (the first
// owns it). Pass-Q's and the all-gather's programs are equivariant under every shift.
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kScenario = shipped_scenario("ring-256k.yaml");

// The smallest K dividing P, below P, that is a multiple of the topology's step (2 on one
// node, 8 across nodes) and of the schedule's (Ulysses' replication; 1 otherwise).
int expected_classes(int gpus, int schedule_step) {
  const int step = std::lcm(gpus > 8 ? 8 : 2, schedule_step);
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0) return k;
  }
  return gpus;
}

// Ulysses on P GPUs needs heads divisible by P: heads = P, kv_heads as given.
std::vector<std::string> ulysses_sets(int gpus, int kv_heads) {
  return {"schedule.kind=ulysses", "attention.heads=" + std::to_string(gpus),
          "attention.kv_heads=" + std::to_string(kv_heads)};
}

void check_case(const std::vector<std::string>& overrides, int expected) {
  const SymmetryCase c = symmetry_case(kScenario, overrides);
  REQUIRE(c.symmetry.has_value());
  CHECK(c.symmetry->classes == expected);
  CHECK(c.prepared.symmetry.has_value());
  if (c.symmetry->exact()) check_symmetric_equals_full(c);
}

}  // namespace

TEST_CASE("the rule for all-peers classes on the H100 cluster, by hand") {
  CHECK(expected_classes(8, 1) == 2);   // one node: every shift
  CHECK(expected_classes(16, 1) == 8);  // whole nodes
  CHECK(expected_classes(256, 1) == 8);
  CHECK(expected_classes(8, 4) == 4);     // Ulysses, kv_heads 2 on 8 GPUs: rep 4
  CHECK(expected_classes(64, 16) == 16);  // kv_heads 4 on 64 GPUs: rep 16
  CHECK(expected_classes(16, 16) == 16);  // rep = P: no shift below P
}

TEST_CASE("symmetric pass-Q simulation equals the full simulation byte for byte") {
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    INFO("pass_q on " << gpus << " GPUs");
    check_case(scale_overrides(gpus, "forward", {"schedule.kind=pass_q"}),
               expected_classes(gpus, 1));
  }
}

TEST_CASE("symmetric all-gather KV simulation equals the full simulation byte for byte") {
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (const std::string pass : {"forward", "backward", "both"}) {
      INFO("allgather_kv on " << gpus << " GPUs, pass " << pass);
      check_case(scale_overrides(gpus, pass, {"schedule.kind=allgather_kv"}),
                 expected_classes(gpus, 1));
    }
  }
}

TEST_CASE("no all-peers symmetry where the programs differ or it is switched off") {
  // Pass-Q has no backward (the generator names the error on the full path); all-gather KV
  // owned by attention work has chunks of different sizes; a causal mask gives ranks
  // different work (symmetric_plan.hpp); schedule.symmetry=off.
  const std::vector<std::vector<std::string>> cases = {
      scale_overrides(16, "forward", {"schedule.kind=pass_q", "attention.causal=true"}),
      scale_overrides(16, "forward", {"schedule.kind=allgather_kv", "schedule.balance=work"}),
      scale_overrides(16, "forward", {"schedule.kind=allgather_kv", "attention.causal=true"}),
      scale_overrides(16, "forward", {"schedule.kind=ulysses", "attention.causal=true"}),
      scale_overrides(64, "forward", ulysses_sets(64, 64)),
      scale_overrides(16, "forward", {"schedule.kind=pass_q", "schedule.symmetry=off"})};
  for (const auto& overrides : cases) {
    INFO(overrides.back());
    CHECK_FALSE(symmetry_case(kScenario, overrides).symmetry.has_value());
  }
}

TEST_CASE("the ring successors' shift search bounds the all-peers classes from below") {
  // The guard's early check (prepared_scenario.cpp): every shift that maps all pairs' routes
  // maps the successors' too. On the H100 cluster the successors need the same shifts (one
  // node: any; across nodes: whole nodes), so the bound is the classes themselves.
  // All-gather KV's NCCL rings may run on the role quotient (rank_roles.hpp) unless the exact
  // quotient is asked for: there the bound is 0 (the guard judges the quotient found).
  for (int gpus : {8, 16, 64, 256}) {
    for (const std::string kind : {"pass_q", "allgather_kv"}) {
      INFO(kind << " on " << gpus << " GPUs");
      const SymmetryCase c = symmetry_case(
          kScenario,
          scale_overrides(gpus, "forward", {"schedule.kind=" + kind, "schedule.symmetry=exact"}));
      REQUIRE(c.symmetry.has_value());
      const int least = all_peers_classes_lower_bound(c.prepared.scenario, c.prepared.topology,
                                                      c.prepared.profile);
      CHECK(least == expected_classes(gpus, 1));
      CHECK(least <= c.symmetry->classes);
    }
  }
  const SymmetryCase by_auto =
      symmetry_case(kScenario, scale_overrides(64, "forward", {"schedule.kind=allgather_kv"}));
  CHECK(all_peers_classes_lower_bound(by_auto.prepared.scenario, by_auto.prepared.topology,
                                      by_auto.prepared.profile) == 0);
  // Not an all-peers schedule, or no symmetric run: 0.
  const SymmetryCase ring = symmetry_case(kScenario, scale_overrides(64, "forward", {}));
  CHECK(all_peers_classes_lower_bound(ring.prepared.scenario, ring.prepared.topology,
                                      ring.prepared.profile) == 0);
  const SymmetryCase off = symmetry_case(
      kScenario, scale_overrides(64, "forward", {"schedule.kind=pass_q", "schedule.symmetry=off"}));
  CHECK(all_peers_classes_lower_bound(off.prepared.scenario, off.prepared.topology,
                                      off.prepared.profile) == 0);
}

TEST_CASE("all-peers search past one leaf group: the walk rejects shifts that break at a leaf") {
  // 512 GPUs are two leaf groups of 32 nodes (topologies/h100-cluster.yaml, nodes_per_leaf 32).
  // A shift by 8 .. 128 maps some route inside a leaf group onto one that crosses the spine (two
  // more hops), which the walk over destinations must reject; the first shift that maps every
  // route onto one of the same hops moves a whole leaf group: 256. Each destination has more
  // than Router::kTreeAfterSearches senders, so the walk routes from whole-graph searches.
  // schedule.symmetry exact: auto runs all-gather KV's rings on the role quotient here (more
  // than kAutoExactCollectiveClasses exact classes).
  for (const char* kind : {"pass_q", "allgather_kv"}) {
    INFO(kind);
    const PreparedScenario p = prepare_scenario(
        kScenario,
        {std::string("schedule.kind=") + kind, "schedule.gpus=512", "schedule.symmetry=exact"});
    REQUIRE(p.symmetry.has_value());
    CHECK(p.symmetry->classes == 256);
  }
}
