// Symmetric simulation of the double ring (sim/scenario/symmetric_plan.hpp): one rank per
// class of a shift by whole inner rings gives the same result JSON as simulating every rank,
// byte for byte, on 8 to 256 GPUs of the shipped H100 cluster (full mask; forward, backward
// and both), with the inner ring a node (the default) and half a node. The comparison and what
// it leaves out: tests/symmetry_fixture.hpp.
//
// The classes expected, by hand: rank r's peers are its inner successor (inside its inner
// ring of k ranks) and its outer successor r + k (mod P); r -> r + K maps the programs onto
// themselves when k divides K, and the outer peer does not fold onto r itself (K does not
// divide k) unless there is one inner ring only (no outer peer). Across nodes of one leaf
// group (up to 256 GPUs) K must move whole nodes (a multiple of 8: the inter-node route relays
// over NVLink to the GPU on the destination's rail). The smallest such K dividing P below P is
// the class count, else P. The backward's dKV follows KV to the same two successors.
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "tests/gpu_counts.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kDoubleRingScenario = shipped_scenario("ring-256k.yaml");

int expected_double_ring_classes(int gpus, int inner) {
  const int step = gpus > 8 ? std::lcm(inner, 8) : inner;
  const bool outer_peer = gpus > inner;
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0 && !(outer_peer && inner % k == 0)) return k;
  }
  return gpus;
}

}  // namespace

TEST_CASE("the rule for double-ring classes on the H100 cluster, by hand") {
  CHECK(expected_double_ring_classes(8, 8) == 8);  // one inner ring, and no K < 8 moves a whole one
  CHECK(expected_double_ring_classes(8, 4) == 8);  // K = 4 folds the outer peer r + 4 onto r
  CHECK(expected_double_ring_classes(16, 8) == 16);  // K = 8 folds the outer peer likewise
  CHECK(expected_double_ring_classes(16, 4) == 8);
  // K = 8 (one node) would fold the outer successor, on the next node, onto r: two nodes.
  CHECK(expected_double_ring_classes(256, 8) == 16);
}

TEST_CASE("symmetric double-ring simulation equals the full simulation byte for byte") {
  int exact_runs = 0;
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (int inner : {8, 4}) {
      for (const std::string pass : {"forward", "backward", "both"}) {
        INFO("double_ring inner " << inner << " on " << gpus << " GPUs, pass " << pass);
        const SymmetryCase c = symmetry_case(
            kDoubleRingScenario, scale_overrides(gpus, pass,
                                                 {"schedule.kind=double_ring",
                                                  "schedule.inner=" + std::to_string(inner)}));
        REQUIRE(c.symmetry.has_value());
        CHECK(c.symmetry->classes == expected_double_ring_classes(gpus, inner));
        if (!c.symmetry->exact()) continue;
        ++exact_runs;
        check_symmetric_equals_full(c);
      }
    }
  }
  if (tilesim::test::gpu_counts_capped()) {
    CHECK(exact_runs > 0);  // the sanitizer stage: the larger counts left out
  } else {
    CHECK(exact_runs == 27);  // every size but 8 (both inners) and 16 with inner 8, 3 passes
  }
}
