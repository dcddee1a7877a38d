// Head shapes (issue 14): separate q/k and v head dims (MLA), wide heads, and Ulysses/USP
// beyond the KV-head count by replicating KV heads. Expected values are written out from the
// closed forms of sim/plan/attention_shape.hpp, independently of the generators.
#include <catch2/catch.hpp>
#include <string>

#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

// DeepSeek-V3's MLA attention: 128 heads, q/k head dim 192 (128 nope + 64 rope), v head dim
// 128; KV is not shared across heads in the materialised form (kv_heads = heads).
AttentionShape mla_shape(std::int64_t seq_len, PassSelection pass, bool causal = false) {
  AttentionShape s = mha_shape(seq_len, causal);
  s.heads = 128;
  s.kv_heads = 128;
  s.head_dim = 192;
  s.v_head_dim = 128;
  s.pass = pass;
  return s;
}

void check_every_rank(const PlanReport& report, double in) {
  INFO(errors_of(report));
  REQUIRE(report.ok());
  for (const RankStats& r : report.ranks) {
    CHECK(r.bytes_received == Approx(in).epsilon(1e-12));
    CHECK(r.bytes_sent == Approx(in).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("head shapes: MLA object bytes, written out") {
  const AttentionShape s = mla_shape(8192, PassSelection::both);
  const std::int64_t c = 1024;
  // Q 1024*128*192*2, dO and finished O 1024*128*128*2, K+V 1024*128*(192+128)*2.
  CHECK(s.q_bytes(c) == 50331648.0);
  CHECK(s.d_o_bytes(c) == 33554432.0);
  CHECK(s.o_output_bytes(c) == 33554432.0);
  CHECK(s.kv_bytes(c) == 83886080.0);
  // fp32 accumulators: O over dv, dQ over d, dK+dV over d + dv.
  CHECK(s.o_accumulator_bytes(c) == 67108864.0);
  CHECK(s.dq_accumulator_bytes(c) == 100663296.0);
  CHECK(s.dq_output_bytes(c) == 50331648.0);
  CHECK(s.dkv_accumulator_bytes(c) == 167772160.0);
  CHECK(s.dkv_output_bytes(c) == 83886080.0);
}

TEST_CASE("head shapes: FLOPs per pair are 2bH(d + dv) forward and 2bH(3d + 2dv) backward") {
  const AttentionShape mla = mla_shape(8192, PassSelection::both);
  CHECK(mla.flops_per_pair_forward() == 2.0 * 128 * (192 + 128));   // 81920
  CHECK(mla.flops_per_pair_backward() == 2.0 * 128 * (576 + 256));  // 212992
  // dv = d reduces to FlashAttention-2's 4bHd and 2.5x that.
  AttentionShape wide = mha_shape(8192);
  wide.head_dim = 256;
  CHECK(wide.value_dim() == 256);
  CHECK(wide.flops_per_pair_forward() == 4.0 * 32 * 256);
  CHECK(wide.flops_per_pair_backward() == 2.5 * 4.0 * 32 * 256);
}

TEST_CASE("head shapes: ring bytes and FLOPs per rank with MLA, both passes") {
  // S = 8K, P = 8, c = 1024, full mask: forward (P-1) kv = 7 * 83886080; backward KV again
  // plus P hops of the fp32 dKV: 7 * 83886080 + 8 * 167772160.
  const int p = 8;
  const AttentionShape both = mla_shape(8192, PassSelection::both);
  const double fwd = 7.0 * 83886080.0, bwd = 7.0 * 83886080.0 + 8.0 * 167772160.0;
  const PlanReport report = validate_plan(plan_of("ring", both, p));
  check_every_rank(report, fwd + bwd);
  // Each rank's Q (1024 tokens) meets all 8192 keys: 1024 * 8192 pairs per pass.
  const double pairs = 1024.0 * 8192.0;
  for (const RankStats& r : report.ranks) {
    CHECK(r.compute_flops == Approx(pairs * (81920.0 + 212992.0)).epsilon(1e-12));
  }
}

TEST_CASE("head shapes: mesh backward moves Q, dO (dv), O (dv), dQ (d) and LSE in Q-groups") {
  // 2 x 2 tile over P = 4, S = 8K, c = 2048, MLA backward: (a-1) (q + do + o + dq + lse) +
  // (b-1) (kv + dkv), bf16 inputs and fp32 accumulators.
  const AttentionShape bwd = mla_shape(8192, PassSelection::backward);
  ScheduleSpec spec;
  spec.kind = "mesh";
  spec.gpus = 4;
  spec.tile_a = 2;
  spec.tile_b = 2;
  const double c = 2048, h = 128;
  const double q = c * h * 192 * 2, d_o = c * h * 128 * 2, o = c * h * 128 * 4,
               dq = c * h * 192 * 4, lse = c * h * 4, kv = c * h * 320 * 2, dkv = c * h * 320 * 4;
  check_every_rank(validate_plan(make_plan(bwd, spec)), q + d_o + o + dq + lse + kv + dkv);
}

TEST_CASE("head shapes: ulysses beyond the KV-head count replicates KV heads") {
  // 32 heads over 4 KV heads (GQA 8:1) on u = P = 8 > kv_heads: each rank's 4 query heads read
  // one KV head, which rep = 2 ranks hold. S = 16K, c = 2048, d = 128, bf16:
  //   q = of = c*32*128*2 / 8 per chunk = 2 MiB; a KV chunk holds one whole KV head:
  //   c*1*256*2 = 1 MiB (unreplicated it would be 4/8 of a head: 0.5 MiB).
  // Forward bytes in per rank: 7 (q/u + kv/kv_heads + of/u).
  AttentionShape s = mha_shape(16 * 1024);
  s.kv_heads = 4;
  const double q_u = 2048.0 * 32 * 128 * 2 / 8, kv_head = 2048.0 * 256 * 2;
  CHECK(q_u == 2097152.0);
  CHECK(kv_head == 1048576.0);
  check_every_rank(validate_plan(plan_of("ulysses", s, 8)), 7 * (q_u + kv_head + q_u));
  // Backward: dO in, dQ and the finished dK+dV (one KV head per chunk) back:
  // 7 (do/u + dqf/u + dkvf/kv_heads); the two copies of a KV head's dKV are summed at the owner.
  s.pass = PassSelection::backward;
  check_every_rank(validate_plan(plan_of("ulysses", s, 8)), 7 * (q_u + q_u + kv_head));
}

TEST_CASE("head shapes: usp u = 4 over 2 KV heads replicates, ring bundles grow to match") {
  // P = 8, u = 4, r = 2, S = 16K, c = 2048, 32 heads over 2 KV heads, forward: the all-to-all
  // (u-1)(q/u + kv/Hkv + of/u) and a ring of r-1 bundles of u chunks, each one KV head (kv/Hkv):
  //   3 (4 MiB + 1 MiB + 4 MiB) + 1 * 4 * 1 MiB.
  AttentionShape s = mha_shape(16 * 1024);
  s.kv_heads = 2;
  const double q_u = 2048.0 * 32 * 128 * 2 / 4;  // 4 MiB
  const double kv_head = 2048.0 * 256 * 2;       // 1 MiB: one KV head of c tokens
  const double want = 3 * (q_u + kv_head + q_u) + 1 * 4 * kv_head;
  CHECK(want == 3.0 * 9437184.0 + 4194304.0);
  check_every_rank(validate_plan(plan_of("usp", s, 8, 4)), want);
  s.pass = PassSelection::both;
  INFO("both passes validate");
  REQUIRE(validate_plan(plan_of("usp", s, 8, 4)).ok());
}

TEST_CASE("head shapes: ulysses says why when neither KV heads nor degree divide the other") {
  // 12 heads over 3 KV heads on u = 4: a rank's 3 query heads would straddle KV heads.
  AttentionShape s = mha_shape(16 * 1024);
  s.heads = 12;
  s.kv_heads = 3;
  try {
    plan_of("ulysses", s, 4);
    FAIL("expected a ScheduleError");
  } catch (const ScheduleError& e) {
    const std::string what = e.what();
    CHECK(what.find("kv_heads 3 and the Ulysses degree 4 do not divide one another") !=
          std::string::npos);
    CHECK(what.find("replicating KV heads") != std::string::npos);
  }
}
