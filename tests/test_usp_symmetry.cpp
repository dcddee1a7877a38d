// Symmetric simulation of USP (Ulysses inside groups of u ranks, a ring per head group across
// the r = P / u groups; sim/schedules/usp_schedule.hpp, sim/scenario/symmetric_plan.hpp): one
// rank per class of a shift by whole Ulysses groups gives the same result JSON as simulating
// every rank, byte for byte, on 8 to 256 GPUs of the shipped H100 cluster (full mask; forward,
// backward and both; Ulysses degrees 2, 4, 8 and 16, the last spanning two nodes). The
// comparison and what it leaves out: tests/symmetry_fixture.hpp.
//
// The classes expected, by hand: rank x = G u + h has as peers the u - 1 other members of its
// group G (the all-to-alls) and member h of group G + 1 (the ring; the backward's dKV follows
// the KV there). x -> x + K maps the programs onto themselves when u divides K; the ring peer
// x + u folds onto x itself when K = u, so K >= 2u. Across nodes of one leaf group (up to 256
// GPUs) K must also move whole nodes (a multiple of 8: the inter-node route relays over
// NVLink to the GPU on the destination's rail). The smallest such K dividing P below P is the
// class count, else P; with one group (u = P, Ulysses alone) none is offered.
#include <catch2/catch.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tests/gpu_counts.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kUspScenario = shipped_scenario("ring-256k.yaml");

// nullopt where no symmetry is offered (a single Ulysses group).
std::optional<int> expected_usp_classes(int gpus, int u) {
  if (gpus / u < 2) return std::nullopt;
  const int step = gpus > 8 ? std::lcm(u, 8) : u;
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0 && k >= 2 * u) return k;
  }
  return gpus;
}

}  // namespace

TEST_CASE("the rule for USP classes on the H100 cluster, by hand") {
  CHECK(expected_usp_classes(8, 2) == 4);    // one node: K = 2 = u folds the ring peer
  CHECK(expected_usp_classes(8, 4) == 8);    // K = 4 = u folds; K = 8 is P
  CHECK(expected_usp_classes(16, 2) == 8);   // whole nodes
  CHECK(expected_usp_classes(16, 8) == 16);  // two groups: K = 16 is P
  CHECK(expected_usp_classes(64, 8) == 16);
  CHECK(expected_usp_classes(256, 16) == 32);
  CHECK_FALSE(expected_usp_classes(8, 8).has_value());
}

TEST_CASE("symmetric USP simulation equals the full simulation byte for byte") {
  int exact_runs = 0;
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (int u : {2, 4, 8, 16}) {
      if (u > gpus) continue;
      for (const std::string pass : {"forward", "backward", "both"}) {
        // Backward alone at one degree: its programs are the tail of `both`'s.
        if (pass == "backward" && u != 8) continue;
        INFO("usp u = " << u << " on " << gpus << " GPUs, pass " << pass);
        const SymmetryCase c = symmetry_case(
            kUspScenario,
            scale_overrides(gpus, pass,
                            {"schedule.kind=usp", "schedule.ulysses=" + std::to_string(u)}));
        const std::optional<int> expected = expected_usp_classes(gpus, u);
        REQUIRE(c.symmetry.has_value() == expected.has_value());
        if (!expected) continue;
        CHECK(c.symmetry->classes == *expected);
        if (!c.symmetry->exact()) continue;
        ++exact_runs;
        check_symmetric_equals_full(c);
      }
    }
  }
  // Exact: u = 2 at every size, 4 from 16 GPUs, 8 from 32, 16 from 64 (forward, both), and
  // backward alone for u = 8 from 32 GPUs.
  if (tilesim::test::gpu_counts_capped()) {
    CHECK(exact_runs > 0);  // the sanitizer stage: the larger counts left out
  } else {
    CHECK(exact_runs == 2 * (6 + 5 + 4 + 3) + 4);
  }
}

TEST_CASE("USP with KV heads replicated across its Ulysses group is symmetric too") {
  // kv_heads 4 < u = 8: each KV head is held by two ranks of the group, whose dKV copies the
  // owner sums (one merge op per rank); the peers are unchanged.
  const SymmetryCase c = symmetry_case(
      kUspScenario,
      scale_overrides(64, "both",
                      {"schedule.kind=usp", "schedule.ulysses=8", "attention.kv_heads=4"}));
  REQUIRE(c.symmetry.has_value());
  CHECK(c.symmetry->classes == 16);
  check_symmetric_equals_full(c);
}
