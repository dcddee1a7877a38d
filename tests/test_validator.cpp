#include <catch2/catch.hpp>
#include <string>

#include "sim/plan/program_builder.hpp"
#include "sim/plan/validator.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"

using namespace tilesim;
using tilesim::testing::mha_shape;

namespace {

int find_op(const Plan& plan, int rank, OpKind kind, int nth = 0) {
  const RankProgram& program = plan.programs[static_cast<std::size_t>(rank)];
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind == kind && nth-- == 0) return i;
  }
  FAIL("no such op");
  return -1;
}

bool mentions(const PlanReport& report, const std::string& text) {
  for (const auto& e : report.errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string all_errors(const PlanReport& report) {
  std::string out;
  for (const auto& e : report.errors) out += e + "\n";
  return out;
}

}  // namespace

TEST_CASE("validator accepts the generated ring") {
  CHECK(validate_plan(make_ring_plan(mha_shape(4096), 4)).ok());
  CHECK(validate_plan(make_ring_plan(mha_shape(4096, true), 4)).ok());
  CHECK(validate_plan(make_ring_plan(mha_shape(4096), 1)).ok());
}

TEST_CASE("validator names a missing block") {
  Plan plan = make_ring_plan(mha_shape(4096), 4);
  // Rank 2's second compute is Q[2] x KV[1].
  plan.programs[2].remove(find_op(plan, 2, OpKind::compute, 1));
  const PlanReport report = validate_plan(plan);
  INFO(all_errors(report));
  CHECK_FALSE(report.ok());
  CHECK(mentions(report, "missing block (q 2, kv 1)"));
  CHECK(mentions(report, "output O[2] on rank 2"));
}

TEST_CASE("validator names a duplicated block and both ops") {
  Plan plan = make_ring_plan(mha_shape(4096), 4);
  ProgramBuilder build(plan);
  // Rank 0 computes its local block a second time at the end of its program.
  const int reads[] = {0, 1};   // Q[0], KV[0]
  const int writes[] = {2, 3};  // O[0], LSE[0]
  const int extra = build.compute(0, 0, 0, Pass::fwd, reads, writes);
  const PlanReport report = validate_plan(plan);
  INFO(all_errors(report));
  CHECK(mentions(report, "duplicated block (q 0, kv 0)"));
  CHECK(mentions(report, "rank 0 op " + std::to_string(extra)));
}

TEST_CASE("validator names an unmatched send") {
  Plan plan = make_ring_plan(mha_shape(4096), 4);
  // Drop rank 1's last recv: rank 0's last send has no partner.
  plan.programs[1].remove(find_op(plan, 1, OpKind::recv, 2));
  const PlanReport report = validate_plan(plan);
  INFO(all_errors(report));
  CHECK(mentions(report, "rank 0 op"));
  CHECK(mentions(report, "has no matching recv"));
}

TEST_CASE("validator names a compute that runs before its input arrives") {
  Plan plan = make_ring_plan(mha_shape(4096), 4);
  RankProgram& program = plan.programs[3];
  // Rewrite rank 3's first compute (on its own KV[3]) to use KV[1], which only
  // arrives two steps later.
  const int first = find_op(plan, 3, OpKind::compute, 0);
  const int kv1 = 1 * 4 + 1;  // objects are Q, KV, O, LSE per chunk
  REQUIRE(plan.object(kv1).name == "KV[1]");
  const int reads[] = {3 * 4 + 0, kv1};
  const int writes[] = {3 * 4 + 2, 3 * 4 + 3};
  program.set_refs(first, reads, writes, {});
  program.mutable_pairs(first)[0].kv_chunk = 1;
  const PlanReport report = validate_plan(plan);
  INFO(all_errors(report));
  CHECK(
      mentions(report, "rank 3 op " + std::to_string(first) +
                           ": compute chunk 3 x chunk 1 fwd: reads KV[1] before it is on rank 3"));
}

TEST_CASE("validator reports a deadlock in the comm order") {
  // Both ranks first post a group holding only a recv, and send in a later
  // group: neither group can complete, as in NCCL with recv-before-send groups.
  Plan plan = make_ring_plan(mha_shape(4096), 2);
  for (auto& program : plan.programs) program = RankProgram{};
  ProgramBuilder build(plan);
  for (int r = 0; r < 2; ++r) {
    const int other = 1 - r;
    const int q = r * 4, kv = r * 4 + 1, o = r * 4 + 2, lse = r * 4 + 3;
    const int kv_other = other * 4 + 1;
    build.recv(r, kv_other, other, 0);
    build.send(r, kv, other, 1);
    const int reads_local[] = {q, kv};
    const int reads_remote[] = {q, kv_other};
    const int writes[] = {o, lse};
    build.compute(r, r, r, Pass::fwd, reads_local, writes);
    build.compute(r, r, other, Pass::fwd, reads_remote, writes);
  }
  const PlanReport report = validate_plan(plan);
  INFO(all_errors(report));
  CHECK(mentions(report, "deadlock"));
  CHECK(mentions(report, "rank 0 op 0: recv KV[1] from rank 1"));
}
