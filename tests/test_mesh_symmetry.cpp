// Symmetric simulation of Mesh-Attention (sim/scenario/symmetric_plan.hpp,
// sim/model/rank_shift_symmetry.hpp): one rank per class of a shift by whole Q-groups
// (node-major) or whole KV-groups (kv-group-major, whose ranks are numbered column by column:
// mesh_placement.hpp), flows with their class's multiplicities, gives the same result JSON as
// simulating every rank, byte for byte, for every tile of 8 to 256 GPUs of the shipped H100
// cluster (full mask; forward, and forward and backward together, under both placements). The
// comparison and what it leaves out: tests/symmetry_fixture.hpp.
//
// The classes expected, worked out from the topology by hand: rank r -> r + K maps the mesh's
// programs onto themselves when K is a multiple of a (Q-groups onto Q-groups, mesh_tile.hpp)
// and the KV peer r + a does not fold onto r itself (K >= 2a). On one node (NVSwitch star)
// every such K maps routes onto routes; across nodes of one leaf group (up to 32 nodes = 256
// GPUs, one leaf per rail) the inter-node route relays over NVLink to the GPU on the
// destination's rail, so K must also move whole nodes (a multiple of 8). The smallest such K
// that divides P and is below P is the class count; none means classes = P (no symmetry).
// Placed kv-group-major the roles of a and b swap: K a multiple of b (tc + 1 mod a shifts the
// rank by b), the Q peer r + b not folding onto r (K >= 2b), so the rule is the transposed
// tile's. Where the plan numbers the ranks the other way (mesh_placement.hpp: node-major by
// column when 8 | a and 8b < max(2a, lcm(a, 8)), kv-group-major by position when 8 | b and 8a <
// max(2b, lcm(b, 8))), a shift by t ranks (t = b, or a) moves every GPU one place inside its
// group of s consecutive GPUs (s = a, or b; a multiple of 8): on one node any multiple of t
// with K >= 2t maps routes onto routes, across nodes K must move whole nodes inside every
// group, a multiple of 8t. The backward's Q and KV rings have the forward's peers, so the rule
// is the same. Under the full mask the fold by rows and columns (mesh_fold.hpp) is simulated
// where it has fewer classes than the shift: its rule is tests/mesh_fold_rule.hpp's.
#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_tile.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/mesh_fold_rule.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kMeshScenario = shipped_scenario("mesh-1m-256.yaml");

// The rule of the header, for node-major placement on the H100 cluster up to 256 GPUs.
int expected_mesh_classes(int gpus, MeshTile tile) {
  const int step = gpus > 8 ? std::lcm(tile.a, 8) : tile.a;
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0 && k >= 2 * tile.a) return k;
  }
  return gpus;
}

// The same, numbered across the groups of s consecutive GPUs, shift t.
int expected_across_groups(int gpus, int t) {
  const int step = gpus > 8 ? 8 * t : t;
  for (int k = step; k < gpus; k += step) {
    if (gpus % k == 0 && k >= 2 * t) return k;
  }
  return gpus;
}

// The classes the header's rules give for the numbering the plan takes, by a shift alone.
int expected_shift_classes(int gpus, MeshTile tile, const std::string& placement) {
  const bool kv = placement == "kv-group-major";
  const bool by_column = mesh_numbering(tile, placement, 8).by_column;
  if (by_column == kv) return expected_mesh_classes(gpus, kv ? MeshTile{tile.b, tile.a} : tile);
  return expected_across_groups(gpus, kv ? tile.a : tile.b);
}

// The quotient simulated: the fold where it has fewer classes than the shift.
int expected_classes(int gpus, MeshTile tile, const std::string& placement) {
  // One leaf group of 32 nodes holds every size up to 256 GPUs.
  return std::min(expected_shift_classes(gpus, tile, placement),
                  expected_fold_classes(gpus, tile, placement, 256));
}

std::vector<std::string> mesh_sets(int gpus, MeshTile tile, const std::string& placement,
                                   const std::string& pass = "forward") {
  return scale_overrides(
      gpus, pass,
      {"schedule.tile=[" + std::to_string(tile.a) + "," + std::to_string(tile.b) + "]",
       "schedule.placement=" + placement});
}

}  // namespace

TEST_CASE("the rule for mesh classes on the H100 cluster, by hand") {
  CHECK(expected_mesh_classes(8, {1, 8}) == 2);  // the ring's shift by 2 on one node
  CHECK(expected_mesh_classes(8, {2, 4}) == 4);  // K = 2 = a would fold the KV peer onto itself
  CHECK(expected_mesh_classes(8, {4, 2}) == 8);  // K = 4 = a folds; no symmetry
  CHECK(expected_mesh_classes(256, {16, 16}) == 32);
  CHECK(expected_mesh_classes(256, {2, 128}) == 8);
  CHECK(expected_mesh_classes(256, {256, 1}) == 256);
  // Across the groups: 64 x 4 node-major by column, K = 8 x 4 = 32 (by position, 128).
  CHECK(expected_across_groups(256, 4) == 32);
  CHECK(expected_mesh_classes(256, {64, 4}) == 128);
  CHECK(expected_across_groups(8, 1) == 2);  // 8 x 1 on one node: every tc + 1 maps
}

TEST_CASE("the plan numbers a mesh's ranks the way that can fold to fewer classes") {
  // 8-GPU nodes. Node-major: by position, K = max(2a, lcm(a, 8)); by column (8 | a) 8b.
  CHECK_FALSE(mesh_numbering({64, 64}, "node-major", 8).by_column);       // 128 against 512
  CHECK_FALSE(mesh_numbering({4, 2}, "node-major", 8).by_column);         // 8 does not divide 4
  CHECK_FALSE(mesh_numbering({128, 32}, "node-major", 8).by_column);      // 256 against 256: tie
  const MeshNumbering tall = mesh_numbering({256, 16}, "node-major", 8);  // 512 against 128
  CHECK(tall.by_column);
  REQUIRE(tall.placement.size() == 4096);
  // Rank tc*16 + tr runs on GPU tr*256 + tc: rank 17 = (tr 1, tc 1) on GPU 257.
  CHECK(tall.placement[17] == 257);
  CHECK(mesh_numbering({8, 1}, "node-major", 8).by_column);  // 16 against 8
  // Kv-group-major: by column, K = max(2b, lcm(b, 8)); by position (8 | b) 8a.
  CHECK(mesh_numbering({256, 16}, "kv-group-major", 8).by_column);  // 32 against 2048
  CHECK(mesh_numbering({64, 256}, "kv-group-major", 8).by_column);  // 512 against 512: tie
  const MeshNumbering wide = mesh_numbering({32, 512}, "kv-group-major", 8);  // 1024 against 256
  CHECK_FALSE(wide.by_column);
  REQUIRE(wide.placement.size() == 16384);
  // Rank (position) 33 = (tr 1, tc 1) runs on GPU tc*512 + tr = 513.
  CHECK(wide.placement[33] == 513);
  // In GPU order no placement is kept.
  CHECK(mesh_numbering({64, 64}, "node-major", 8).placement.empty());
  CHECK(mesh_numbering({256, 16}, "kv-group-major", 8).placement.empty());
}

TEST_CASE("symmetric mesh simulation equals the full simulation byte for byte") {
  int exact_runs = 0;
  for (int gpus : tilesim::test::gpu_counts({8, 16, 32, 64, 128, 256})) {
    for (const MeshTile tile : mesh_tiles(gpus)) {
      for (const std::string placement : {"node-major", "kv-group-major"}) {
        for (const std::string pass : {"forward", "both"}) {
          INFO("mesh " << tile.a << "x" << tile.b << " on " << gpus << " GPUs, " << placement
                       << ", pass " << pass);
          const SymmetryCase c =
              symmetry_case(kMeshScenario, mesh_sets(gpus, tile, placement, pass));
          REQUIRE(c.symmetry.has_value());
          CHECK(c.symmetry->classes == expected_classes(gpus, tile, placement));
          CHECK(gpus % c.symmetry->classes == 0);
          if (!c.symmetry->exact()) continue;
          ++exact_runs;
          check_symmetric_equals_full(c);
        }
      }
    }
  }
  // Not a vacuous loop: every size has exact tiles (a = 1, 2, ... with 2a <= P / 2), under
  // each placement and pass. With every size the count is a change detector (156: 148 by the
  // shift alone, and the fold makes 4 x 2 and 2 x 4 on one node exact under both placements
  // and passes); the sanitizer stage caps the sizes (gpu_counts.hpp: up to 64 GPUs).
  if (tilesim::test::gpu_counts_capped()) {
    CHECK(exact_runs > 0);
  } else {
    CHECK(exact_runs == 156);
  }
}

TEST_CASE("a mesh the shift does not map onto itself takes the fold by rows and columns") {
  // 4x2 on one node: a shift K must be a multiple of a = 4 below 8, and K = 4 folds the KV peer
  // onto the representative itself, so no shift applies; the fold by x = 2 KV positions and
  // y = 2 Q positions does (K = 4: the group is the Q ring turned by two places).
  CHECK(expected_shift_classes(8, {4, 2}, "node-major") == 8);
  const PreparedScenario p = prepare_scenario(kMeshScenario, mesh_sets(8, {4, 2}, "node-major"));
  const auto sym = scenario_symmetry(p.scenario, p.topology, p.profile);
  REQUIRE(sym.has_value());
  CHECK(sym->classes == 4);
  CHECK(sym->exact());
  REQUIRE(sym->mesh_fold.has_value());
  CHECK((*sym->mesh_fold)[0] == 2);
  CHECK((*sym->mesh_fold)[1] == 2);
  // A causal mesh is not offered a symmetry (its ranks' tiles hold different work).
  const PreparedScenario causal =
      prepare_scenario(kMeshScenario, {"schedule.gpus=16", "attention.seq_len=16384",
                                       "schedule.tile=[2,8]", "attention.causal=true"});
  CHECK_FALSE(scenario_symmetry(causal.scenario, causal.topology, causal.profile).has_value());
  // A backward mesh is, by the forward's rule.
  const PreparedScenario backward =
      prepare_scenario(kMeshScenario, mesh_sets(16, {2, 8}, "node-major", "backward"));
  const auto backward_sym =
      scenario_symmetry(backward.scenario, backward.topology, backward.profile);
  REQUIRE(backward_sym.has_value());
  CHECK(backward_sym->classes == expected_classes(16, {2, 8}, "node-major"));
}
