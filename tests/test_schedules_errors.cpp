#include <catch2/catch.hpp>
#include <string>

#include "sim/plan/program_builder.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

std::string key_of(const std::string& kind, const AttentionShape& shape, int gpus, int u = 0,
                   int inner = 0) {
  try {
    plan_of(kind, shape, gpus, u, inner);
  } catch (const ScheduleError& e) {
    return e.key() + ": " + e.what();
  }
  return "no error";
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

}  // namespace

TEST_CASE("schedules: ulysses needs heads divisible by the degree, KV heads one way or the other") {
  AttentionShape shape = shape_with(true, false, PassSelection::forward);
  // 32 heads, 8 kv heads on 16: KV heads replicated twice (test_schedules_head_shapes.cpp).
  CHECK(key_of("ulysses", shape, 16) == "no error");
  shape.kv_heads = 32;
  shape.heads = 96;  // 96 heads over 32 kv heads on 12 ranks: neither 32 % 12 nor 12 % 32
  const std::string kv = key_of("ulysses", shape, 12);
  INFO(kv);
  CHECK(starts_with(kv,
                    "attention.kv_heads: ulysses: kv_heads 32 and the Ulysses degree 12 do not "
                    "divide one another"));
  shape.heads = 24;
  shape.kv_heads = 24;
  const std::string heads = key_of("ulysses", shape, 16);
  INFO(heads);
  CHECK(starts_with(heads, "attention.heads: ulysses: heads 24 are not divisible"));
  CHECK(starts_with(key_of("usp", shape_with(false, false, PassSelection::forward), 8, 3),
                    "schedule.ulysses: usp: Ulysses degree 3 does not divide 8 GPUs"));
}

TEST_CASE("schedules: pass_q rejects a backward pass, bad splits name their key") {
  const AttentionShape bwd = shape_with(false, false, PassSelection::backward);
  CHECK(starts_with(key_of("pass_q", bwd, 4), "attention.pass: schedule 'pass_q'"));
  for (const char* kind : {"allgather_kv", "double_ring"}) {
    INFO(kind);
    CHECK(key_of(kind, bwd, 4) == "no error");
  }
  const AttentionShape fwd = shape_with(false, false, PassSelection::forward, 4100);
  CHECK(starts_with(key_of("zigzag", fwd, 4),
                    "attention.seq_len: seq_len 4100 is not divisible "
                    "into 8 zigzag blocks for 4 GPUs"));
  CHECK(
      starts_with(key_of("double_ring", shape_with(false, false, PassSelection::forward), 8, 0, 3),
                  "schedule.inner: inner ring of 3 ranks does not divide 8 GPUs"));
}

TEST_CASE(
    "schedules: validator names a compute across two head groups and a missing head-group block") {
  Plan plan = plan_of("ulysses", shape_with(false, false, PassSelection::forward, 4096), 2);
  // Rank 0 computes head group 0; point its first compute's kv chunk at head group 1.
  RankProgram& program = plan.programs[0];
  int first = -1;
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind == OpKind::compute) {
      first = i;
      break;
    }
  }
  REQUIRE(first >= 0);
  ChunkPair& pair = program.mutable_pairs(first)[0];
  pair.kv_chunk = pair.q_chunk + 1;  // same tokens, head group 1
  const PlanReport report = validate_plan(plan);
  INFO(errors_of(report));
  CHECK_FALSE(report.ok());
  CHECK(errors_of(report).find("q chunk is in head group 0 and kv chunk in head group 1") !=
        std::string::npos);

  Plan missing = plan_of("ulysses", shape_with(false, false, PassSelection::forward, 4096), 2);
  missing.programs[1].remove([&] {
    for (int i = 0;; ++i) {
      if (missing.programs[1].op(i).kind == OpKind::compute) return i;
    }
  }());
  const std::string errors = errors_of(validate_plan(missing));
  INFO(errors);
  CHECK(errors.find("missing block (q 0, kv 0, head group 1) fwd") != std::string::npos);
}
