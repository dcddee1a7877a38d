// compare's --schedules syntax (sim/verbs/schedule_list.hpp) accepts every label tune prints
// and gives the same schedule settings as tune's candidate: what tune ranks, compare can rerun.
#include <catch2/catch.hpp>

#include "sim/core/input_error.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/verbs/schedule_list.hpp"
#include "tests/schedule_fixtures.hpp"

namespace tilesim {
namespace {

TEST_CASE("every tune candidate's label parses to its settings", "[compare][tune]") {
  ScheduleSpec base;
  base.kind = "ring";
  base.gpus = 64;
  base.gpus_per_node = 8;
  const AttentionShape shape = testing::mha_shape(64 * 1024, true);
  const std::vector<ScheduleCandidate> candidates = tune_candidates(shape, base, false);
  int with_parameter = 0;
  for (const ScheduleCandidate& c : candidates) {
    INFO(c.label);
    const std::vector<ScheduleCandidate> parsed = parse_schedule_list(c.label, base);
    REQUIRE(parsed.size() == 1);
    const ScheduleSpec& got = parsed[0].spec;
    CHECK(parsed[0].label == c.label);
    CHECK(got.kind == c.spec.kind);
    CHECK(got.ulysses_degree == c.spec.ulysses_degree);
    CHECK(got.inner_ring == c.spec.inner_ring);
    CHECK(got.balance == c.spec.balance);
    if (c.spec.kind == "mesh") {
      CHECK(got.tile_a == c.spec.tile_a);
      CHECK(got.tile_b == c.spec.tile_b);
      CHECK(got.tile_choice == c.spec.tile_choice);
      CHECK(got.placement == c.spec.placement);
    }
    if (c.label.find(':') != std::string::npos) ++with_parameter;
  }
  // usp:u2..u32 (heads 32), double_ring:inner2..inner32 and every mesh tile in two placements.
  CHECK(with_parameter > 20);
}

TEST_CASE("a bad parameter names the entry and what was expected", "[compare]") {
  ScheduleSpec base;
  base.gpus = 64;
  CHECK_THROWS_WITH(
      parse_schedule_list("mesh:8x8/diagonal", base),
      Catch::Contains("'mesh:8x8/diagonal'") && Catch::Contains("node-major or kv-group-major"));
  CHECK_THROWS_WITH(parse_schedule_list("double_ring:4x2", base),
                    Catch::Contains("expected double_ring:K"));
  CHECK_THROWS_AS(parse_schedule_list("double_ring:innerx", base), InputError);
  CHECK_THROWS_AS(parse_schedule_list("zigzag:2", base), InputError);
}

}  // namespace
}  // namespace tilesim
