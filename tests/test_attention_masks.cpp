// Masks: the pair-count closed forms (attention_mask.hpp) against direct counting with the
// visibility rule, hand-computed blocks, and the validator's coverage for every mask.
#include <catch2/catch.hpp>

#include "sim/plan/attention_mask.hpp"
#include "sim/plan/token_layout.hpp"
#include "sim/plan/validator.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

// The independent count: every (query, key) pair of the two runs through visible().
double brute_pairs(const AttentionMask& m, const PositionRun& q, const PositionRun& kv) {
  double n = 0;
  for (std::int64_t a = 0; a < q.count; ++a) {
    for (std::int64_t b = 0; b < kv.count; ++b) {
      n += m.visible(q.start + a * q.stride, kv.start + b * kv.stride) ? 1 : 0;
    }
  }
  return n;
}

AttentionMask window_mask(std::int64_t w) {
  AttentionMask m;
  m.kind = AttentionMaskKind::sliding_window;
  m.window_tokens = w;
  return m;
}

AttentionMask causal_mask() {
  AttentionMask m;
  m.kind = AttentionMaskKind::causal;
  return m;
}

}  // namespace

TEST_CASE("masks: hand-computed block pair counts") {
  const PositionRun block{0, 1, 4};
  // Causal diagonal block of 4 tokens: 1 + 2 + 3 + 4.
  CHECK(causal_mask().pairs(block, block) == 10);
  // Window 2: each query sees itself and the previous key: 1 + 2 + 2 + 2.
  CHECK(window_mask(2).pairs(block, block) == 7);
  // Documents [3, 5] over 8 tokens: 3*4/2 + 5*6/2.
  const PositionRun all{0, 1, 8};
  CHECK(documents_mask({3, 5}).pairs(all, all) == 21);
  // Window 3 between contiguous blocks [4, 8) (queries) and [0, 4) (keys): query 4 sees 2, 3;
  // query 5 sees 3; queries 6, 7 see none: 3 pairs.
  CHECK(window_mask(3).pairs({4, 1, 4}, {0, 1, 4}) == 3);
  // Striped: 8 tokens in 2 blocks (stride 2). Causal (q block 0 = 0,2,4,6, kv block 1 =
  // 1,3,5,7): query 2 sees 1; 4 sees 1, 3; 6 sees 1, 3, 5: 6 = c(c-1)/2 with c = 4.
  CHECK(causal_mask().pairs({0, 2, 4}, {1, 2, 4}) == 6);
}

TEST_CASE("masks: closed forms equal direct counting over contiguous and striped blocks") {
  const std::vector<AttentionMask> masks = {AttentionMask{},     causal_mask(),
                                            window_mask(1),      window_mask(5),
                                            window_mask(17),     documents_mask({7, 1, 20, 3, 33}),
                                            documents_mask({64})};
  for (const AttentionMask& m : masks) {
    for (int blocks : {1, 2, 4, 8}) {
      for (LayoutKind kind : {LayoutKind::contiguous, LayoutKind::striped}) {
        TokenLayout layout{kind, 64, blocks};
        for (int qb = 0; qb < blocks; ++qb) {
          for (int kb = 0; kb < blocks; ++kb) {
            INFO(to_string(m.kind)
                 << " window " << m.window_tokens << " blocks " << blocks
                 << (kind == LayoutKind::striped ? " striped" : "") << " q " << qb << " kv " << kb);
            CHECK(layout.unmasked_pairs(qb, kb, m) ==
                  brute_pairs(m, layout.run(qb), layout.run(kb)));
          }
        }
      }
    }
  }
}

TEST_CASE("masks: the validator covers every unmasked block pair of every mask") {
  AttentionShape shape = shape_with(true, true, PassSelection::both, 1024);
  for (const AttentionMask& m :
       {window_mask(100), window_mask(300), documents_mask({50, 300, 10, 600, 64})}) {
    shape.set_mask(m);
    for (const char* kind : {"ring", "zigzag", "striped", "usp", "mesh"}) {
      INFO(kind << " " << to_string(m.kind));
      ScheduleSpec spec;
      spec.kind = kind;
      spec.gpus = 4;
      spec.ulysses_degree = std::string(kind) == "usp" ? 2 : 0;
      spec.tile_a = spec.tile_b = 2;  // mesh only
      const PlanReport report = validate_plan(make_plan(shape, spec));
      INFO(errors_of(report));
      CHECK(report.ok());
    }
    AttentionShape fwd = shape;
    fwd.pass = PassSelection::forward;
    for (const char* kind : {"allgather_kv", "pass_q", "double_ring"}) {
      INFO(kind << " " << to_string(m.kind));
      const PlanReport report = validate_plan(plan_of(kind, fwd, 4, 0, 2));
      INFO(errors_of(report));
      CHECK(report.ok());
    }
  }
}

TEST_CASE("masks: a shape whose causal flag contradicts its mask is rejected") {
  AttentionShape shape = shape_with(false, false, PassSelection::forward, 1024);
  Plan plan = plan_of("ring", shape, 4);
  plan.shape.mask = window_mask(10);  // causal stays false
  const PlanReport report = validate_plan(plan);
  REQUIRE_FALSE(report.ok());
  CHECK(errors_of(report).find("causal = false but its mask is sliding_window") !=
        std::string::npos);
}
