// The mesh's fold by rows and columns (sim/schedules/mesh_fold.hpp) and the group quotient it
// runs on (sim/model/rank_group_symmetry.hpp): the numbering and generators by hand, the link
// orbits of one node by hand, the contract's refusals, a placement the fabric does not keep,
// and byte-identical result JSON against every rank's simulation on a fabric of small leaf
// groups (tests/data/symmetry/four-node-leaves.yaml), where a turn of the positions is an
// automorphism only if it moves whole leaf groups; the classes against tests/mesh_fold_rule.hpp.
#include <catch2/catch.hpp>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "sim/model/rank_group_symmetry.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/mesh_fold.hpp"
#include "sim/schedules/mesh_placement.hpp"
#include "sim/schedules/mesh_tile.hpp"
#include "sim/topology/topology_loader.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/mesh_fold_rule.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

// A named namespace: the unity build (tools/sanitize.sh) joins this file with the other
// symmetry tests, whose helpers have the same names.
namespace mesh_fold_test {

const std::string kFoldScenario = shipped_scenario("mesh-1m-256.yaml");
const std::string kSmallLeaves =
    std::string(TILESIM_SOURCE_DIR) + "/tests/data/symmetry/four-node-leaves.yaml";
const std::string kH100Profile = std::string(TILESIM_SOURCE_DIR) + "/topologies/h100.calib.yaml";

std::string shipped_topology(const std::string& name) {
  return std::string(TILESIM_SOURCE_DIR) + "/topologies/" + name;
}

int position(MeshTile tile, int tr, int tc) { return tr * tile.a + tc; }

// The search of a tile placed node-major, in the fold's numbering (as symmetric_plan.cpp).
RankGroupSearch node_major_search(MeshTile tile, MeshFold fold) {
  const std::vector<int> rho = mesh_fold_ranks(tile, fold);
  RankGroupSearch search;
  search.classes = fold.classes();
  search.placement.resize(static_cast<std::size_t>(tile.ranks()));
  search.peers.resize(search.placement.size());
  for (int g = 0; g < tile.ranks(); ++g) {
    const auto r = static_cast<std::size_t>(rho[static_cast<std::size_t>(g)]);
    search.placement[r] = g;
    search.peers[r] = {rho[static_cast<std::size_t>(tile.q_next(g))],
                       rho[static_cast<std::size_t>(tile.kv_next(g))]};
  }
  search.generators = mesh_fold_generators(tile, fold);
  return search;
}

}  // namespace mesh_fold_test

using namespace mesh_fold_test;

TEST_CASE("the fold numbers positions so that a class is its ranks mod x y") {
  const MeshTile tile{4, 4};
  const MeshFold fold{2, 2};
  const std::vector<int> rho = mesh_fold_ranks(tile, fold);
  // rho = tr mod 2 + 2 (tc mod 2) + 4 (tr / 2 + 2 (tc / 2)), by hand.
  CHECK(rho[static_cast<std::size_t>(position(tile, 0, 0))] == 0);
  CHECK(rho[static_cast<std::size_t>(position(tile, 1, 0))] == 1);
  CHECK(rho[static_cast<std::size_t>(position(tile, 0, 1))] == 2);
  CHECK(rho[static_cast<std::size_t>(position(tile, 3, 1))] == 7);   // 1 + 2 + 4 (1 + 0)
  CHECK(rho[static_cast<std::size_t>(position(tile, 1, 3))] == 11);  // 1 + 2 + 4 (0 + 2)
  CHECK(rho[static_cast<std::size_t>(position(tile, 3, 3))] == 15);
  CHECK(std::set<int>(rho.begin(), rho.end()).size() == 16);
  for (int g = 0; g < tile.ranks(); ++g) {
    CHECK(rho[static_cast<std::size_t>(g)] % 4 == tile.kv_pos(g) % 2 + 2 * (tile.q_pos(g) % 2));
  }
  // Rows by 2 take (0, 0) to (2, 0), rank 4; columns by 2 take it to (0, 2), rank 8.
  const std::vector<std::vector<int>> gens = mesh_fold_generators(tile, fold);
  REQUIRE(gens.size() == 2);
  CHECK(gens[0][0] == 4);
  CHECK(gens[1][0] == 8);
  CHECK(gens[0][7] == 3);  // (3, 1) -> (1, 1): 1 + 2
  // A side the fold spans whole has no generator: 4 x 2 by x = 2 turns the columns only.
  CHECK(mesh_fold_generators({4, 2}, {2, 2}).size() == 1);
}

TEST_CASE("the folds are tried fewest classes first") {
  const std::vector<MeshFold> square = mesh_fold_candidates({4, 4});
  REQUIRE(square.size() == 3);  // 2x2, 2x4, 4x2 (4x4 is every rank)
  CHECK(square[0].classes() == 4);
  CHECK((square[1].x == 2 && square[1].y == 4));
  CHECK((square[2].x == 4 && square[2].y == 2));
  // A 1 x 8 tile is a ring: x divides b = 8, y = 1.
  const std::vector<MeshFold> ring = mesh_fold_candidates({1, 8});
  REQUIRE(ring.size() == 2);
  CHECK((ring[0].x == 2 && ring[0].y == 1));
  CHECK((ring[1].x == 4 && ring[1].y == 1));
}

TEST_CASE("a group quotient's link orbits on one node, by hand") {
  // 4 x 2 node-major on one DGX H100: x = 2 spans the rows, so the group is the Q ring turned
  // by y = 2, of order 2. Every GPU's NVLink to the switch and back is in an orbit of 2: its own
  // and that of the GPU two Q positions on.
  const Topology topology = load_topology(shipped_topology("dgx-h100.yaml"), 8);
  Router router(topology);
  const std::optional<RankShiftSymmetry> sym =
      find_rank_group_symmetry(topology, router, node_major_search({4, 2}, {2, 2}));
  REQUIRE(sym.has_value());
  CHECK(sym->classes == 4);
  CHECK(sym->copies() == 2);
  int used = 0;
  for (int l = 0; l < topology.link_count(); ++l) {
    if (sym->link_canonical[static_cast<std::size_t>(l)] < 0) continue;
    ++used;
    CHECK(sym->link_orbit_size[static_cast<std::size_t>(l)] == 2);
  }
  CHECK(used == 16);  // 8 GPUs, a link to the switch and one back each
  // Representative 0 is position (0, 0) on GPU 0; GPU 2 (position (0, 2)) is in its class.
  CHECK(sym->gpu_canonical[2] == 0);
  // Its Q peer (0, 1) is rank 2 and class 2; its KV peer (1, 0) rank 1 and class 1.
  REQUIRE(sym->full_peers[0].size() == 2);
  CHECK(sym->full_peers[0][0] == std::pair<int, int>{2, 2});
  CHECK(sym->full_peers[0][1] == std::pair<int, int>{1, 1});
}

TEST_CASE("a group quotient refuses a broken contract and a fabric that moves routes") {
  const Topology one_node = load_topology(shipped_topology("dgx-h100.yaml"), 8);
  Router router(one_node);
  RankGroupSearch search = node_major_search({4, 2}, {2, 2});
  RankGroupSearch across = search;
  std::swap(across.generators[0][0], across.generators[0][1]);  // moves rank 0 to class 1
  CHECK_THROWS_AS(find_rank_group_symmetry(one_node, router, across), std::invalid_argument);
  RankGroupSearch no_divisor = search;
  no_divisor.classes = 3;
  CHECK_THROWS_AS(find_rank_group_symmetry(one_node, router, no_divisor), std::invalid_argument);
  // 8 x 4 on four nodes of the H100 cluster, a node per Q-group: turning the Q ring by y = 2
  // keeps the rails' order on every node, but not after two GPUs of node 0 are swapped with
  // two of node 1 in the placement (a route's relay then leaves its node's rail order).
  const Topology cluster = load_topology(shipped_topology("h100-cluster.yaml"), 32);
  Router cluster_router(cluster);
  RankGroupSearch kept = node_major_search({8, 4}, {2, 2});
  CHECK(find_rank_group_symmetry(cluster, cluster_router, kept).has_value());
  RankGroupSearch moved = kept;
  for (int& gpu : moved.placement) {
    if (gpu == 6 || gpu == 7) {
      gpu += 8;
    } else if (gpu == 14 || gpu == 15) {
      gpu -= 8;
    }
  }
  CHECK_FALSE(find_rank_group_symmetry(cluster, cluster_router, moved).has_value());
}

TEST_CASE("the fold equals every rank's simulation on small leaf groups") {
  int folded_runs = 0;
  for (int gpus : gpu_counts({64, 128, 256})) {
    for (const MeshTile tile : mesh_tiles(gpus)) {
      if (tile.a < 2 || tile.b < 2) continue;  // a ring or pass-Q: the shift's cases
      for (const std::string placement : {"node-major", "kv-group-major"}) {
        for (const std::string pass : {"forward", "both"}) {
          INFO("mesh " << tile.a << "x" << tile.b << " on " << gpus << " GPUs, " << placement
                       << ", pass " << pass);
          std::vector<std::string> sets = scale_overrides(
              gpus, pass,
              {"schedule.tile=[" + std::to_string(tile.a) + "," + std::to_string(tile.b) + "]",
               "schedule.placement=" + placement, "topology=" + kSmallLeaves,
               "calibration=" + kH100Profile});
          const SymmetryCase c = symmetry_case(kFoldScenario, sets);
          REQUIRE(c.symmetry.has_value());
          const int fold_rule = expected_fold_classes(gpus, tile, placement, 32);
          if (c.symmetry->mesh_fold) {
            CHECK(c.symmetry->classes == fold_rule);
            CHECK((*c.symmetry->mesh_fold)[0] * (*c.symmetry->mesh_fold)[1] == fold_rule);
            ++folded_runs;
          } else {
            CHECK(c.symmetry->classes <= fold_rule);  // a shift as small or smaller
          }
          if (c.symmetry->exact()) check_symmetric_equals_full(c);
        }
      }
    }
  }
  // Not vacuous: most tiles fold (a change detector where every size runs).
  CHECK(folded_runs > 0);
}

TEST_CASE("a folded run's per-rank figures are its classes' in the plan's numbering") {
  // 16 x 16 on 256 GPUs of the H100 cluster folds by x = 2 KV positions and y = 8 Q positions
  // (16 classes, where the shift needs 32); the plan numbers ranks by position, so rank g's
  // class is (tr mod 2) + 2 (tc mod 8).
  const SymmetryCase c =
      symmetry_case(kFoldScenario, scale_overrides(256, "forward", {"schedule.tile=[16,16]"}));
  REQUIRE(c.symmetry.has_value());
  REQUIRE(c.symmetry->mesh_fold.has_value());
  CHECK(c.symmetry->classes == 16);
  const MeshTile tile{16, 16};
  REQUIRE(c.symmetry->class_of_rank.size() == 256);
  for (int g = 0; g < 256; ++g) {
    CHECK(c.symmetry->class_of_rank[static_cast<std::size_t>(g)] ==
          tile.kv_pos(g) % 2 + 2 * (tile.q_pos(g) % 8));
  }
  // schedule.symmetry: roles takes an exact quotient no larger than its blocks: the fold too.
  const SymmetryCase roles = symmetry_case(
      kFoldScenario,
      scale_overrides(256, "forward", {"schedule.tile=[16,16]", "schedule.symmetry=roles"}));
  REQUIRE(roles.symmetry.has_value());
  CHECK(roles.symmetry->mesh_fold.has_value());
  CHECK(roles.symmetry->classes == 16);
  CHECK_FALSE(roles.symmetry->approximate());
}
