// The per-rank dependency structure the executor walks.
#include <algorithm>
#include <catch2/catch.hpp>

#include "runtime/executor/rank_dependencies.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;
using namespace tilesim::runtime;

namespace {

bool waits_for(const RankDependencies& deps, int op, int pre) {
  const auto p = deps.prerequisites(op);
  return std::find(p.begin(), p.end(), pre) != p.end();
}

}  // namespace

TEST_CASE("runtime: ring dependencies follow the plan semantics", "[runtime]") {
  AttentionShape shape;
  shape.seq_len = 64;
  shape.heads = 2;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  ScheduleSpec spec;
  spec.gpus = 4;
  spec.correction = Correction::fused;  // the generated ring, no correction ops
  const Plan plan = make_plan(shape, spec);
  const int rank = 1;
  const RankProgram& program = plan.programs[rank];
  const RankDependencies deps(plan, rank);
  REQUIRE(deps.size() == program.size());
  // Three ring steps with a send and a receive each; four computes; three frees.
  REQUIRE(deps.groups().size() == 3);
  CHECK(deps.compute_ops().size() == 4);
  CHECK(deps.free_ops().size() == 3);
  for (const CommGroup& g : deps.groups()) {
    REQUIRE(g.ops.size() == 2);
    CHECK(program.op(g.ops[0]).kind == OpKind::send);
    CHECK(program.op(g.ops[1]).kind == OpKind::recv);
  }
  // Group 2 waits for all of group 1; the compute on a received KV waits for its receive.
  for (int op : deps.groups()[0].ops) CHECK(waits_for(deps, deps.groups()[1].ops[0], op));
  const int recv0 = deps.groups()[0].ops[1];
  const int object = program.writes(recv0)[0];
  for (int op : deps.compute_ops()) {
    const auto reads = program.reads(op);
    if (std::find(reads.begin(), reads.end(), object) != reads.end()) {
      CHECK(waits_for(deps, op, recv0));
    }
  }
  // A free waits for every earlier reader of its object (write-after-read).
  for (int f : deps.free_ops()) {
    const int freed = program.writes(f)[0];
    for (int i = 0; i < f; ++i) {
      const auto reads = program.reads(i);
      if (std::find(reads.begin(), reads.end(), freed) != reads.end()) {
        CHECK(waits_for(deps, f, i));
      }
    }
  }
  for (std::size_t i = 0; i < deps.size(); ++i) {
    for (int p : deps.prerequisites(static_cast<int>(i))) CHECK(p < static_cast<int>(i));
  }
}

TEST_CASE("runtime: the separate correction's merge follows its call, the partial's free the merge",
          "[runtime]") {
  AttentionShape shape;
  shape.seq_len = 64;
  shape.heads = 2;
  shape.kv_heads = 2;
  shape.head_dim = 16;
  ScheduleSpec spec;
  spec.gpus = 4;
  const Plan plan = make_plan(shape, spec);
  const RankProgram& program = plan.programs[1];
  const RankDependencies deps(plan, 1);
  // Four calls and three corrections on the compute stream; three KV frees and one free of the
  // O and LSE block partials after each correction.
  CHECK(deps.compute_ops().size() == 4 + 3);
  CHECK(deps.free_ops().size() == 3 + 3);
  int merges = 0;
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind != OpKind::merge) continue;
    ++merges;
    REQUIRE(program.op(i - 1).kind == OpKind::compute);
    CHECK(waits_for(deps, i, i - 1));  // reads the partials the call wrote
    CHECK(program.op(i + 1).kind == OpKind::free);
    CHECK(waits_for(deps, i + 1, i));  // the partial is dropped once merged
  }
  CHECK(merges == 3);
}
