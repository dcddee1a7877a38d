// relabel_ranks (sim/plan/rank_relabel.hpp) and permute_chunk_contents (chunk_layouts.hpp): the
// two renumberings a mesh numbered by column is built with, checked on a 4-rank ring plan.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "sim/plan/rank_relabel.hpp"
#include "sim/plan/validator.hpp"
#include "sim/schedules/chunk_layouts.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"

using namespace tilesim;
using tilesim::testing::mha_shape;

TEST_CASE("relabel_ranks moves programs, peers, owners, homes and placement together") {
  const Plan ring = make_ring_plan(mha_shape(4096), 4);
  Plan relabelled = ring;
  relabelled.placement = {10, 11, 12, 13};
  const std::vector<int> new_rank = {2, 0, 3, 1};
  relabel_ranks(relabelled, new_rank);
  CHECK(validate_plan(relabelled).ok());
  // Rank r's program is now rank new_rank[r]'s, still on r's GPU, talking to the same partners.
  CHECK(relabelled.placement == std::vector<int>{11, 13, 10, 12});
  for (int r = 0; r < 4; ++r) {
    const RankProgram& moved = relabelled.programs[static_cast<std::size_t>(new_rank[r])];
    const RankProgram& before = ring.programs[static_cast<std::size_t>(r)];
    REQUIRE(moved.size() == before.size());
    for (int i = 0; i < static_cast<int>(before.size()); ++i) {
      if (before.op(i).kind == OpKind::send || before.op(i).kind == OpKind::recv) {
        CHECK(moved.op(i).peer == new_rank[static_cast<std::size_t>(before.op(i).peer)]);
      }
    }
    CHECK(relabelled.chunks[static_cast<std::size_t>(r)].owner == new_rank[r]);
  }
  for (std::size_t x = 0; x < ring.objects.size(); ++x) {
    CHECK(relabelled.objects[x].home_rank == new_rank[ring.objects[x].home_rank]);
  }
  // Not a permutation of the 4 ranks: refused, the plan unchanged.
  Plan refused = ring;
  CHECK_THROWS_AS(relabel_ranks(refused, std::vector<int>{0, 1, 1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(relabel_ranks(refused, std::vector<int>{0, 1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(relabel_ranks(refused, std::vector<int>{0, 1, 2, 4}), std::invalid_argument);
  CHECK(refused.chunks[1].owner == 1);
}

TEST_CASE("permute_chunk_contents moves tokens, not owners, before objects exist") {
  Plan plan = make_chunked_plan("ring", mha_shape(4096, true), 4, ChunkOwnership::zigzag);
  // Zigzag over 8 blocks: chunk r = {r, 7 - r}.
  permute_chunk_contents(plan, {3, 0, 1, 2});
  CHECK(plan.chunks[0].blocks == std::vector<int>{3, 4});
  CHECK(plan.chunks[1].blocks == std::vector<int>{0, 7});
  CHECK(plan.chunks[0].owner == 0);
  CHECK_THROWS_AS(permute_chunk_contents(plan, {0, 0, 1, 2}), std::invalid_argument);
  CHECK_THROWS_AS(permute_chunk_contents(plan, {0, 1, 2}), std::invalid_argument);
  // The rotation is the permutation c -> c + shift.
  Plan rotated = make_chunked_plan("ring", mha_shape(4096, true), 4, ChunkOwnership::zigzag);
  rotate_chunk_contents(rotated, 3);
  CHECK(rotated.chunks[0].blocks == std::vector<int>{3, 4});
  CHECK(rotated.chunks[1].blocks == std::vector<int>{0, 7});
  // After objects are added the contents stay (their chunks' tokens are already named).
  Plan built = make_ring_plan(mha_shape(4096), 4);
  CHECK_THROWS_AS(permute_chunk_contents(built, {1, 2, 3, 0}), std::invalid_argument);
}
