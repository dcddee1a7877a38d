// validate refuses a measured run of another plan: the plan digest is equal for equal plans
// and moves with any change to what a plan computes, moves or waits for; a run whose fields
// or digest differ from the plan's is an InputError naming the key.
#include <catch2/catch.hpp>

#include "sim/core/input_error.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/plan/plan_digest.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "sim/validation/run_identity.hpp"
#include "tests/plan_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::validation;
using namespace tilesim::testing;

namespace {

// The result JSON `tilesim run --json` writes for `plan` (timings do not matter here).
nlohmann::json run_json(const Plan& plan) {
  const SimulationResult result =
      simulate(plan, star_topology(plan.ranks, 1e11), ideal_profile(1e12));
  return nlohmann::json::parse(result_to_json(plan, result, {"ring-test", "", "", false}).dump());
}

std::string rejected_key(const nlohmann::json& run, const Plan& plan) {
  try {
    check_run_matches_plan(run, plan, "run.json");
  } catch (const InputError& e) {
    CHECK(e.file() == "run.json");
    return e.key();
  }
  return "";
}

}  // namespace

TEST_CASE("plan digest: equal plans agree, any change moves it") {
  const Plan plan = make_ring_plan(mha_shape(16 * 1024), 4);
  const std::string digest = plan_digest(plan);
  CHECK(digest.size() == 16);
  CHECK(plan_digest(make_ring_plan(mha_shape(16 * 1024), 4)) == digest);
  CHECK(plan_digest(make_ring_plan(mha_shape(32 * 1024), 4)) != digest);
  CHECK(plan_digest(make_ring_plan(mha_shape(16 * 1024, true), 4)) != digest);
  CHECK(plan_digest(make_ring_plan(gqa_shape(16 * 1024), 4)) != digest);
  CHECK(plan_digest(make_ring_plan(mha_shape(16 * 1024), 8)) != digest);

  Plan swapped = plan;  // one compute op reads another block: same sizes, other work
  for (std::size_t i = 0; i < swapped.programs[1].size(); ++i) {
    if (swapped.programs[1].op(static_cast<int>(i)).kind != OpKind::compute) continue;
    swapped.programs[1].mutable_pairs(static_cast<int>(i))[0].kv_chunk ^= 1;
    break;
  }
  CHECK(plan_digest(swapped) != digest);

  Plan placed = plan;  // same programs on other GPUs
  placed.placement = {1, 0, 2, 3};
  CHECK(plan_digest(placed) != digest);
  placed.placement = {0, 1, 2, 3};  // the identity, spelled out: the same plan
  CHECK(plan_digest(placed) == digest);

  Plan striped = plan;  // same ops over other token positions: other causal masks
  striped.layout.kind = LayoutKind::striped;
  CHECK(plan_digest(striped) != digest);

  Plan regrouped = plan;
  regrouped.chunks[0].head_group = 1;
  CHECK(plan_digest(regrouped) != digest);
}

TEST_CASE("validate: a run of this plan passes, a run of another is refused naming the key") {
  const Plan plan = make_ring_plan(mha_shape(16 * 1024), 4);
  const nlohmann::json run = run_json(plan);
  CHECK(run["plan_digest"] == plan_digest(plan));
  CHECK_NOTHROW(check_run_matches_plan(run, plan, "run.json"));

  CHECK(rejected_key(run_json(make_ring_plan(mha_shape(32 * 1024), 4)), plan) == "seq_len");
  CHECK(rejected_key(run_json(make_ring_plan(mha_shape(16 * 1024), 8)), plan) == "gpus");
  CHECK(rejected_key(run_json(make_ring_plan(gqa_shape(16 * 1024), 4)), plan) == "kv_heads");
  CHECK(rejected_key(run_json(make_ring_plan(mha_shape(16 * 1024, true), 4)), plan) == "causal");

  nlohmann::json other_digest = run;  // every field agrees, the plan does not
  other_digest["plan_digest"] = "0000000000000000";
  CHECK(rejected_key(other_digest, plan) == "plan_digest");

  nlohmann::json older = run;  // a file written before runs recorded their plan
  older.erase("plan_digest");
  older.erase("heads");
  CHECK_NOTHROW(check_run_matches_plan(older, plan, "run.json"));
}
