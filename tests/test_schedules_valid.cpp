#include <catch2/catch.hpp>
#include <vector>

#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

struct Case {
  const char* kind;
  std::vector<int> gpus;
  bool backward;
};

void check_valid(const Plan& plan, const char* what) {
  const PlanReport report = validate_plan(plan);
  INFO(what << ": " << plan.schedule << " P = " << plan.ranks << "\n" << errors_of(report));
  REQUIRE(report.ok());
  // Total FLOPs equal the single-GPU work of the passes the plan runs.
  const double s = static_cast<double>(plan.shape.seq_len);
  const double pairs = plan.shape.causal ? s * (s + 1) / 2 : s * s;
  double want = 0.0;
  if (plan.shape.has_forward()) want += pairs * plan.shape.flops_per_pair_forward();
  if (plan.shape.has_backward()) want += pairs * plan.shape.flops_per_pair_backward();
  double got = 0.0;
  for (const RankStats& r : report.ranks) got += r.compute_flops;
  CHECK(got == Approx(want).epsilon(1e-12));
}

}  // namespace

TEST_CASE("schedules: every generator's plan passes validate_plan") {
  const std::vector<Case> cases = {
      {"ring", {1, 2, 3, 4, 8}, true},
      {"zigzag", {1, 2, 3, 4, 8}, true},
      {"striped", {1, 2, 3, 4, 8}, true},
      {"pass_q", {1, 2, 3, 4, 8}, false},
      {"allgather_kv", {1, 2, 3, 4, 8}, false},
      {"ulysses", {1, 2, 4, 8}, true},
      {"usp", {1, 2, 4, 8}, true},
      {"double_ring", {1, 2, 4, 8}, false},
  };
  for (const Case& c : cases) {
    for (int p : c.gpus) {
      for (bool gqa : {false, true}) {
        for (bool causal : {false, true}) {
          std::vector<PassSelection> passes = {PassSelection::forward};
          if (c.backward) {
            passes.push_back(PassSelection::backward);
            passes.push_back(PassSelection::both);
          }
          for (PassSelection pass : passes) {
            const AttentionShape shape = shape_with(gqa, causal, pass);
            INFO(c.kind << " P = " << p << (gqa ? " GQA" : " MHA") << (causal ? " causal " : " ")
                        << to_string(pass));
            check_valid(plan_of(c.kind, shape, p), c.kind);
          }
        }
      }
    }
  }
}

TEST_CASE(
    "schedules: usp validates for every Ulysses degree and double_ring for every inner ring") {
  for (bool causal : {false, true}) {
    for (PassSelection pass : {PassSelection::forward, PassSelection::both}) {
      const AttentionShape shape = shape_with(true, causal, pass);
      for (int u : {1, 2, 4, 8}) {
        INFO("usp u = " << u << (causal ? " causal" : ""));
        check_valid(plan_of("usp", shape, 8, u), "usp");
      }
    }
    const AttentionShape fwd = shape_with(false, causal, PassSelection::forward);
    for (int inner : {1, 2, 4, 8}) {
      INFO("double_ring inner = " << inner);
      check_valid(plan_of("double_ring", fwd, 8, 0, inner), "double_ring");
    }
    check_valid(plan_of("double_ring", fwd, 6, 0, 3), "double_ring 2x3");
  }
}

TEST_CASE("schedules: with a fused correction, only pass_q merges") {
  for (const char* kind :
       {"ring", "zigzag", "striped", "pass_q", "allgather_kv", "ulysses", "usp", "double_ring"}) {
    const Plan plan =
        plan_of(kind, shape_with(false, false, PassSelection::forward), 4, 0, 0, Correction::fused);
    int merges = 0;
    for (const RankProgram& program : plan.programs) {
      for (const Op& op : program.ops()) merges += op.kind == OpKind::merge ? 1 : 0;
    }
    INFO(kind);
    // pass_q: each owner merges the P-1 partials of its chunk.
    CHECK(merges == (std::string(kind) == "pass_q" ? 4 * 3 : 0));
  }
}

TEST_CASE("schedules: zigzag and striped set the token layout of the balancing") {
  const AttentionShape shape = shape_with(false, true, PassSelection::forward, 8192);
  const Plan zigzag = plan_of("zigzag", shape, 4);
  CHECK(zigzag.layout.blocks == 8);
  CHECK(zigzag.layout.kind == LayoutKind::contiguous);
  CHECK(zigzag.chunks[1].blocks == std::vector<int>{1, 6});
  const Plan striped = plan_of("striped", shape, 4);
  CHECK(striped.layout.kind == LayoutKind::striped);
  CHECK(striped.layout.blocks == 4);
  CHECK(striped.layout.block_start(3) == 3);
  CHECK(striped.layout.block_stride() == 4);
  const Plan ulysses = plan_of("ulysses", shape, 4);
  CHECK(ulysses.head_groups == 4);
  CHECK(ulysses.chunks.size() == 16u);
}
