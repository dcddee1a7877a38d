// Causal work balance: max/mean of the per-rank compute FLOPs.
#include <catch2/catch.hpp>

#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

TEST_CASE("schedules: plain causal ring is about 2x unbalanced at 8 ranks") {
  const AttentionShape shape = shape_with(false, true, PassSelection::forward, 8192);
  const double balance = compute_balance(validate_plan(plan_of("ring", shape, 8)));
  // (7 full + diag) / (3.5 full + diag), diag = c(c+1)/2 pairs, c = 1024.
  const double c = 1024, full = c * c, diag = c * (c + 1) / 2;
  CHECK(balance == Approx((7 * full + diag) / (3.5 * full + diag)).epsilon(1e-12));
  CHECK(balance > 1.85);
}

TEST_CASE("schedules: zigzag balances causal work exactly") {
  for (int p : {2, 4, 8}) {
    for (PassSelection pass : {PassSelection::forward, PassSelection::backward}) {
      const AttentionShape shape = shape_with(true, true, pass, 8192);
      const PlanReport report = validate_plan(plan_of("zigzag", shape, p));
      REQUIRE(report.ok());
      // Every rank: (2P-1) full + 2 diagonal blocks of h = S/2P tokens.
      const double h = 8192.0 / (2 * p);
      const double per_pair = pass == PassSelection::forward ? shape.flops_per_pair_forward()
                                                             : shape.flops_per_pair_backward();
      for (const RankStats& r : report.ranks) {
        CHECK(r.compute_flops ==
              Approx(per_pair * ((2 * p - 1) * h * h + 2 * h * (h + 1) / 2)).epsilon(1e-12));
      }
      CHECK(compute_balance(report) <= 1.05);
      CHECK(compute_balance(report) == Approx(1.0).epsilon(1e-12));
    }
  }
}

TEST_CASE("schedules: striped balance is (Pc + P)/(Pc + 1)") {
  for (int p : {2, 4, 8}) {
    const AttentionShape shape = shape_with(false, true, PassSelection::forward, 8192);
    const double balance = compute_balance(validate_plan(plan_of("striped", shape, p)));
    const double c = 8192.0 / p;
    CHECK(balance == Approx((p * c + p) / (p * c + 1)).epsilon(1e-12));
    CHECK(balance <= 1.05);
  }
}

TEST_CASE("schedules: causal allgather_kv, pass_q, double_ring, ulysses and usp are balanced") {
  for (const char* kind : {"allgather_kv", "pass_q", "double_ring", "ulysses", "usp"}) {
    const AttentionShape shape = shape_with(false, true, PassSelection::forward, 8192);
    const PlanReport report = validate_plan(plan_of(kind, shape, 8, 2, 4));
    INFO(kind << "\n" << errors_of(report));
    REQUIRE(report.ok());
    CHECK(compute_balance(report) <= 1.05);
  }
}

TEST_CASE("schedules: a ulysses rank computes 1/P of the heads over the whole sequence") {
  const AttentionShape shape = shape_with(false, false, PassSelection::forward, 8192);
  const PlanReport report = validate_plan(plan_of("ulysses", shape, 4));
  REQUIRE(report.ok());
  // 4*b*S^2*(H/P)*d per rank.
  for (const RankStats& r : report.ranks) {
    CHECK(r.compute_flops == 4.0 * 8192.0 * 8192.0 * (32 / 4) * 128);
  }
}
