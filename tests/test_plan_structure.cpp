// The structural check reports out-of-range references instead of letting the validator read
// past the plan's tables (cases the plan fuzzer produces).
#include <catch2/catch.hpp>
#include <limits>
#include <string>
#include <vector>

#include "sim/plan/plan_structure.hpp"
#include "sim/plan/validator.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;

namespace {

Plan ring4() {
  AttentionShape a;
  a.seq_len = 96;
  a.heads = 4;
  a.kv_heads = 2;
  a.head_dim = 16;
  ScheduleSpec s;
  s.gpus = 4;
  return make_plan(a, s);
}

std::string only_error(const Plan& plan) {
  const PlanReport r = validate_plan(plan);
  REQUIRE(r.errors.size() == 1);
  return r.errors.front();
}

int first_of(const RankProgram& p, OpKind kind) {
  for (int i = 0; i < static_cast<int>(p.size()); ++i) {
    if (p.op(i).kind == kind) return i;
  }
  return -1;
}

}  // namespace

TEST_CASE("every generated plan of every schedule is structurally sound") {
  AttentionShape a;
  a.seq_len = 96;
  a.heads = 4;
  a.kv_heads = 4;
  a.head_dim = 16;
  for (const char* kind : kScheduleKinds) {
    for (PassSelection pass : {PassSelection::forward, PassSelection::both}) {
      a.pass = pass;
      ScheduleSpec s;
      s.kind = kind;
      s.gpus = 4;
      s.gpus_per_node = 2;
      if (s.kind == "mesh") s.tile_a = s.tile_b = 2;
      if (s.kind == "usp") s.ulysses_degree = 2;
      INFO(kind);
      Plan plan;
      try {
        plan = make_plan(a, s);
      } catch (const ScheduleError&) {
        CHECK(pass == PassSelection::both);  // forward-only schedules refuse a backward
        continue;
      }
      CHECK(plan_structure_errors(plan).empty());
    }
  }
}

TEST_CASE("a peer outside the ranks is reported, naming the op") {
  Plan plan = ring4();
  const int send = first_of(plan.programs[1], OpKind::send);
  plan.programs[1].mutable_op(send).peer = 7;
  CHECK(only_error(plan) == "rank 1 op " + std::to_string(send) + ": peer 7 is not another rank");
}

TEST_CASE("an object id past the table is reported") {
  Plan plan = ring4();
  const int compute = first_of(plan.programs[0], OpKind::compute);
  const int bad[] = {static_cast<int>(plan.objects.size())};
  RankProgram& p = plan.programs[0];
  p.set_refs(compute, bad, p.writes(compute), p.after(compute));
  CHECK_THAT(only_error(plan),
             Catch::Matchers::Contains("object " + std::to_string(plan.objects.size()) +
                                       " does not exist"));
}

TEST_CASE("a chunk pair, a home rank and a program count out of range are reported") {
  Plan plan = ring4();
  plan.programs[2].mutable_pairs(first_of(plan.programs[2], OpKind::compute))[0].kv_chunk = -1;
  CHECK_THAT(only_error(plan), Catch::Matchers::Contains("does not exist"));
  plan = ring4();
  plan.objects[0].home_rank = 4;
  CHECK(only_error(plan) == "object 0: home 4 is not a rank");
  plan = ring4();
  plan.ranks = 5;
  CHECK(only_error(plan) == "4 programs for 5 ranks");
}

// fuzz/regressions/plan/head-groups-int-max: head_groups = INT_MAX made the coverage check
// allocate head_groups x blocks^2 bytes (8 GiB); a plan has at most one group per head.
TEST_CASE("more head groups than heads are reported before anything is sized by them") {
  Plan plan = ring4();
  plan.head_groups = 5;                                  // ring4 has 4 heads
  CHECK(only_error(plan) == "head_groups 5 > heads 4");  // validate_plan checks structure first
  plan.head_groups = std::numeric_limits<int>::max();
  CHECK(only_error(plan) == "head_groups 2147483647 > heads 4");
  plan.head_groups = 4;  // one group per head: structurally allowed (chunks still name group 0)
  CHECK(plan_structure_errors(plan).empty());
}
