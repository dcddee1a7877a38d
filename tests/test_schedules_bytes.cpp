// Closed-form bytes per rank, forward (docs/schedules.md has the derivations).
#include <catch2/catch.hpp>

#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/schedule_kinds.hpp"
#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

void check_every_rank(const PlanReport& report, double in, double out) {
  INFO(errors_of(report));
  REQUIRE(report.ok());
  for (const RankStats& r : report.ranks) {
    CHECK(r.bytes_received == Approx(in).epsilon(1e-12));
    CHECK(r.bytes_sent == Approx(out).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("schedules: zigzag, striped, allgather_kv and double_ring receive (P-1) kv per rank") {
  for (const char* kind : {"zigzag", "striped", "allgather_kv", "double_ring"}) {
    for (int p : {2, 4, 8}) {
      for (bool gqa : {false, true}) {
        for (bool causal : {false, true}) {
          const AttentionShape shape = shape_with(gqa, causal, PassSelection::forward);
          const ChunkBytes b = chunk_bytes(shape, p);
          INFO(kind << " P = " << p << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
          check_every_rank(validate_plan(plan_of(kind, shape, p, 0, p >= 4 ? 2 : 0)),
                           (p - 1) * b.kv, (p - 1) * b.kv);
        }
      }
    }
  }
}

TEST_CASE("schedules: GQA kv bytes are kv_heads/heads of MHA") {
  // kv = 2*b*c*Hkv*d*e: 32 -> 8 kv heads is 4x fewer ring bytes.
  const double mha =
      validate_plan(plan_of("zigzag", shape_with(false, true, PassSelection::forward), 8))
          .max_bytes_received();
  const double gqa =
      validate_plan(plan_of("zigzag", shape_with(true, true, PassSelection::forward), 8))
          .max_bytes_received();
  CHECK(gqa * 4 == mha);
  CHECK(mha == 7 * 2.0 * 6144 * 32 * 128 * 2);
}

TEST_CASE("schedules: double_ring sends n-1 kv across nodes and n(k-1) inside") {
  // P = 8 as 2 nodes x 4: each rank sends (n-1) = 1 chunk to the other node.
  const AttentionShape shape = shape_with(false, false, PassSelection::forward);
  const Plan plan = plan_of("double_ring", shape, 8, 0, 4);
  const ChunkBytes b = chunk_bytes(shape, 8);
  for (int r = 0; r < 8; ++r) {
    double inter = 0.0, intra = 0.0;
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind != OpKind::recv) continue;
      const double bytes = plan.object(program.writes(i)[0]).bytes;
      (op.peer / 4 == r / 4 ? intra : inter) += bytes;
    }
    CHECK(inter == 1 * b.kv);
    CHECK(intra == 2 * 3 * b.kv);
  }
}

TEST_CASE("schedules: pass_q receives (P-1) q plus (P-1) returning O, LSE partials") {
  for (int p : {2, 3, 4, 8}) {
    for (bool gqa : {false, true}) {
      for (bool causal : {false, true}) {
        const AttentionShape shape = shape_with(gqa, causal, PassSelection::forward);
        const ChunkBytes b = chunk_bytes(shape, p);
        INFO("P = " << p << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
        // Partial O is fp32: o = b*c*H*d*4, lse = b*c*H*4; KV never moves, so
        // GQA does not change pass-Q bytes.
        const double want = (p - 1) * b.q + (p - 1) * (b.o + b.lse);
        check_every_rank(validate_plan(plan_of("pass_q", shape, p)), want, want);
      }
    }
  }
}

TEST_CASE("schedules: ulysses moves (P-1)/P of Q, K, V in and of the finished O (bf16) out") {
  for (int p : {2, 4, 8}) {
    for (bool gqa : {false, true}) {
      const AttentionShape shape = shape_with(gqa, false, PassSelection::forward);
      const ChunkBytes b = chunk_bytes(shape, p);
      INFO("P = " << p << (gqa ? " GQA" : " MHA"));
      const double f = (p - 1.0) / p;
      const double want = f * (b.q + b.kv + b.of);
      check_every_rank(validate_plan(plan_of("ulysses", shape, p)), want, want);
      // An fp32 output rule moves the O leg at 4 bytes per element.
      AttentionShape fp32_out = shape;
      fp32_out.output_dtype = DType::fp32;
      const double want32 = f * (b.q + b.kv + b.o);
      check_every_rank(validate_plan(plan_of("ulysses", fp32_out, p)), want32, want32);
    }
  }
}

TEST_CASE("schedules: usp u x r moves (u-1)/u of Q, KV, finished O plus (r-1) kv on the ring") {
  for (int u : {1, 2, 4, 8}) {
    for (bool gqa : {false, true}) {
      for (bool causal : {false, true}) {
        const AttentionShape shape = shape_with(gqa, causal, PassSelection::forward);
        const int p = 8, r = p / u;
        const ChunkBytes b = chunk_bytes(shape, p);
        INFO("u = " << u << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
        const double want = (u - 1.0) / u * (b.q + b.kv + b.of) + (r - 1) * b.kv;
        check_every_rank(validate_plan(plan_of("usp", shape, p, u)), want, want);
      }
    }
  }
}

TEST_CASE("schedules: usp picks the largest Ulysses degree within a node") {
  AttentionShape shape = shape_with(true, false, PassSelection::forward);
  ScheduleSpec spec;
  spec.kind = "usp";
  spec.gpus = 64;
  spec.gpus_per_node = 8;
  CHECK(usp_ulysses_degree(shape, spec) == 8);
  shape.kv_heads = 4;
  CHECK(usp_ulysses_degree(shape, spec) == 4);
  spec.gpus = 2;
  CHECK(usp_ulysses_degree(shape, spec) == 2);
  spec.ulysses_degree = 1;
  CHECK(usp_ulysses_degree(shape, spec) == 1);
}

TEST_CASE("all-gather KV warns where it keeps grouped send/recv across nodes") {
  ScheduleSpec spec;
  spec.kind = "allgather_kv";
  spec.gpus = 16;
  spec.gpus_per_node = 8;
  // Full and causal masks over the layout's chunks run NCCL's rings: nothing to say.
  const AttentionShape full = shape_with(false, false, PassSelection::both);
  const AttentionShape causal = shape_with(false, true, PassSelection::both);
  CHECK(allgather_kv_uses_nccl_ring(full, false));
  CHECK(allgather_kv_uses_nccl_ring(causal, false));
  CHECK(allgather_kv_cost_warning(spec, full).empty());
  CHECK(allgather_kv_cost_warning(spec, causal).empty());
  // A window keeps the grouped send/recv of the chunks each rank reads: on 2 nodes of 8 each
  // GPU's NIC carries its chunk to the GPUs of the other node that read it, where an NCCL ring
  // would carry it once: up to 8x on the cross-node part.
  AttentionShape window = shape_with(false, true, PassSelection::forward);
  AttentionMask mask;
  mask.kind = AttentionMaskKind::sliding_window;
  mask.window_tokens = 4096;
  window.set_mask(mask);
  CHECK_FALSE(allgather_kv_uses_nccl_ring(window, false));
  CHECK_THAT(allgather_kv_cost_warning(spec, window),
             Catch::Matchers::Contains("under this mask the KV all-gather is costed as grouped") &&
                 Catch::Matchers::Contains("up to 8x"));
  AttentionShape window_both = window;
  window_both.pass = PassSelection::both;
  CHECK_THAT(allgather_kv_cost_warning(spec, window_both),
             Catch::Matchers::Contains("all-gather and the dKV reduce-scatter are costed"));
  // Chunks dealt by work under a causal mask leave pairs empty too.
  CHECK_FALSE(allgather_kv_uses_nccl_ring(causal, true));
  spec.balance = TokenBalance::work;
  CHECK_THAT(allgather_kv_cost_warning(spec, causal), Catch::Matchers::Contains("up to 8x"));
  spec.balance = TokenBalance::layout;
  spec.gpus_per_node = 4;  // a group with 4 ranks on each node
  CHECK_THAT(allgather_kv_cost_warning(spec, window), Catch::Matchers::Contains("up to 4x"));
  // One node, and one rank per node (each GPU's own NIC, as NCCL's ring uses it): nothing.
  spec.gpus = 8;
  spec.gpus_per_node = 8;
  CHECK(allgather_kv_cost_warning(spec, window).empty());
  spec.gpus = 16;
  spec.gpus_per_node = 1;
  CHECK(allgather_kv_cost_warning(spec, window).empty());
  spec.gpus_per_node = 8;
  spec.kind = "ring";
  CHECK(allgather_kv_cost_warning(spec, window).empty());
}
