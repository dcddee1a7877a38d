// The plan-size estimates against the plans the generators build, and the guard's refusal
// figures against hand-computed ones.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/scenario/resource_guard.hpp"
#include "sim/schedules/schedule.hpp"

using namespace tilesim;

namespace {

AttentionShape shape(PassSelection pass) {
  AttentionShape a;
  a.seq_len = 64 * 1024;
  a.heads = 64;
  a.kv_heads = 64;
  a.head_dim = 64;
  a.pass = pass;
  return a;
}

ScheduleSpec spec(const char* kind, int gpus) {
  ScheduleSpec s;
  s.kind = kind;
  s.gpus = gpus;
  s.gpus_per_node = 8;
  return s;
}

// The estimate is an upper bound within `slack` of the plan's real op count.
void check_estimate(const AttentionShape& a, const ScheduleSpec& s, double slack) {
  const double real = static_cast<double>(make_plan(a, s).op_count());
  const double estimate = estimate_plan(a, s).ops;
  INFO(s.kind << " on " << s.gpus << " GPUs: real " << real << ", estimate " << estimate);
  CHECK(estimate >= real);
  CHECK(estimate <= slack * real);
}

}  // namespace

TEST_CASE("ring-like estimates equal the generated op counts (6 P^2 - 5 P forward)") {
  for (const char* kind : {"ring", "zigzag", "striped", "double_ring"}) {
    for (int p : {8, 16, 32}) check_estimate(shape(PassSelection::forward), spec(kind, p), 1.0);
  }
  for (int p : {8, 16, 32}) {
    check_estimate(shape(PassSelection::forward), spec("allgather_kv", p), 1.0);  // 3 P^2 - 2 P
  }
  for (PassSelection pass : {PassSelection::backward, PassSelection::both}) {
    check_estimate(shape(pass), spec("ring", 16), 1.0);  // 9 P^2 - 5 P, 15 P^2 - 10 P
  }
}

TEST_CASE("pass_q, ulysses and usp estimates equal the generated op counts") {
  check_estimate(shape(PassSelection::forward), spec("pass_q", 16), 1.0);   // 13 P^2 - 12 P
  check_estimate(shape(PassSelection::forward), spec("ulysses", 16), 1.0);  // 9 P^2 - 8 P
  for (int u : {2, 4, 8}) {
    ScheduleSpec usp = spec("usp", 16);
    usp.ulysses_degree = u;
    check_estimate(shape(PassSelection::forward), usp, 1.0);  // P ((3u + 3) P/u + 6u - 11)
  }
}

TEST_CASE("mesh estimates bound the generated op counts of fixed tiles within 14%") {
  for (auto [a, b] : {std::pair{4, 4}, std::pair{2, 8}, std::pair{8, 8}, std::pair{2, 4}}) {
    ScheduleSpec s = spec("mesh", a * b);
    s.tile_a = a;
    s.tile_b = b;
    for (PassSelection pass :
         {PassSelection::forward, PassSelection::backward, PassSelection::both}) {
      check_estimate(shape(pass), s, 1.14);
    }
  }
}

TEST_CASE("memory and time follow the per-op constants") {
  const PlanEstimate e = estimate_plan(shape(PassSelection::forward), spec("ring", 1000));
  CHECK(e.ops == 6e6 - 5e3);  // 6 P^2 - 5 P
  CHECK(e.memory_bytes == 10e6 + 113.0 * 5.995e6);
  CHECK(std::abs(e.sim_s - 33.572) < 1e-9);
}

TEST_CASE("ring on 65536 GPUs is refused with its estimate and the largest count that fits") {
  ResourceLimits limits;
  limits.max_memory_bytes = 12e9;
  // 6 * 65536^2 - 5 * 65536 = 2.577e10 ops; 10 MB + 113 B each = 2.912e12 bytes (2.65 TiB).
  // Fits: 10e6 + 113 (6 P^2 - 5 P) <= 12e9  ->  6 P^2 - 5 P <= 1.0611e8  ->  P <= 4205.7.
  const std::string why =
      resource_violation(shape(PassSelection::forward), spec("ring", 65536), limits);
  CHECK_THAT(why, Catch::Matchers::Contains("ring on 65536 GPUs is about 2.58e+10 ops"));
  CHECK_THAT(why, Catch::Matchers::Contains("2.65 TiB"));
  CHECK_THAT(why, Catch::Matchers::Contains("--max-memory 11.18 GiB"));
  CHECK_THAT(why, Catch::Matchers::Contains("at most 4205 GPUs would fit"));
  CHECK(resource_violation(shape(PassSelection::forward), spec("ring", 4205), limits).empty());
  CHECK_FALSE(
      resource_violation(shape(PassSelection::forward), spec("ring", 4206), limits).empty());
}

TEST_CASE("an op limit (--max-ops) refuses on the op count alone") {
  ResourceLimits limits;
  limits.max_memory_bytes = 1e15;
  limits.max_ops = 1e6;  // 6 P^2 - 5 P <= 1e6 -> P <= 408.7
  const std::string why =
      resource_violation(shape(PassSelection::forward), spec("ring", 1024), limits);
  CHECK_THAT(why, Catch::Matchers::Contains("--max-ops 1e+06"));
  CHECK_THAT(why, Catch::Matchers::Contains("at most 408 GPUs would fit"));
}

TEST_CASE("the default memory limit is half of MemTotal") {
  const double limit = default_max_memory_bytes();
  CHECK(limit > 100e6);  // any machine that runs the suite
  CHECK(limit < 1e15);
}
