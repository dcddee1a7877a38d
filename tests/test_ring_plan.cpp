#include <catch2/catch.hpp>

#include "sim/plan/validator.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"

using namespace tilesim;
using tilesim::testing::gqa_shape;
using tilesim::testing::mha_shape;

TEST_CASE("ring receives exactly (P-1) KV chunks per rank") {
  for (int p : {2, 3, 4, 8, 16}) {
    for (bool gqa : {false, true}) {
      const AttentionShape shape = gqa ? gqa_shape(48 * 1024) : mha_shape(48 * 1024);
      const Plan plan = make_ring_plan(shape, p);
      const PlanReport report = validate_plan(plan);
      INFO("P = " << p << (gqa ? " GQA" : " MHA"));
      REQUIRE(report.ok());
      // kv = 2 * b * c * Hkv * d * e with c = S / P, e = 2 (bf16).
      const double c = 48.0 * 1024 / p;
      const double kv = 2.0 * 1 * c * (gqa ? 8 : 32) * 128 * 2;
      for (const RankStats& r : report.ranks) {
        CHECK(r.bytes_received == (p - 1) * kv);
        CHECK(r.bytes_sent == (p - 1) * kv);
      }
      CHECK(report.total_bytes_sent() == p * (p - 1) * kv);
    }
  }
}

TEST_CASE("ring computes every block once and each rank P blocks of c^2 pairs") {
  const Plan plan = make_ring_plan(mha_shape(4096), 4);
  const PlanReport report = validate_plan(plan);
  REQUIRE(report.ok());
  const double c = 1024.0;
  for (const RankStats& r : report.ranks) {
    CHECK(r.computes == 4);
    CHECK(r.compute_flops == 4 * (4.0 * c * c * 32 * 128));
  }
}

TEST_CASE("plain causal ring is unbalanced: rank r computes r+1 blocks") {
  const Plan plan = make_ring_plan(mha_shape(8192, true), 8);
  const PlanReport report = validate_plan(plan);
  REQUIRE(report.ok());
  const double c = 1024.0;
  const double full = 4.0 * c * c * 32 * 128;
  const double diag = 4.0 * c * (c + 1) / 2 * 32 * 128;
  double sum = 0.0, max = 0.0;
  for (int r = 0; r < 8; ++r) {
    const RankStats& s = report.ranks[static_cast<std::size_t>(r)];
    CHECK(s.computes == r + 1);
    CHECK(s.compute_flops == Approx(r * full + diag).epsilon(1e-12));
    sum += s.compute_flops;
    max = std::max(max, s.compute_flops);
  }
  // Balance max/mean is close to 2 for the plain ring (docs/schedules.md, zigzag).
  // max/mean = (7 full + diag) / (mean of r full + diag) = (7f+d) / (3.5f+d) -> ~2.
  CHECK(max / (sum / 8) == Approx((7 * full + diag) / (3.5 * full + diag)));
  CHECK(max / (sum / 8) > 1.7);
}

TEST_CASE("ring keeps at most two received KV chunks live (double buffering)") {
  const AttentionShape shape = mha_shape(8 * 1024);
  const Plan plan = make_ring_plan(shape, 8);
  const PlanReport report = validate_plan(plan);
  REQUIRE(report.ok());
  const double own = shape.q_bytes(1024) + shape.kv_bytes(1024) + shape.o_accumulator_bytes(1024) +
                     shape.lse_bytes(1024);
  for (const RankStats& r : report.ranks) {
    CHECK(r.peak_bytes == own + 2 * shape.kv_bytes(1024));
  }
}
