// Closed-form bytes per rank, backward and forward+backward.
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "tests/schedule_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;

namespace {

void check_every_rank(const PlanReport& report, double in) {
  INFO(errors_of(report));
  REQUIRE(report.ok());
  for (const RankStats& r : report.ranks) {
    CHECK(r.bytes_received == Approx(in).epsilon(1e-12));
    CHECK(r.bytes_sent == Approx(in).epsilon(1e-12));
  }
}

}  // namespace

TEST_CASE("schedules: ring-family backward receives (P-1) kv + P dkv (fp32) per rank") {
  for (const char* kind : {"ring", "zigzag", "striped"}) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (bool gqa : {false, true}) {
        for (bool causal : {false, true}) {
          INFO(kind << " P = " << p << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
          const AttentionShape bwd = shape_with(gqa, causal, PassSelection::backward);
          const ChunkBytes b = chunk_bytes(bwd, p);
          // KV goes round again (P-1 hops); dK, dV accumulators make P hops,
          // the last one home. dkv = 2*b*c*Hkv*d*4.
          const double dkv_hops = p > 1 ? p : 0;
          check_every_rank(validate_plan(plan_of(kind, bwd, p)), (p - 1) * b.kv + dkv_hops * b.dkv);
          const AttentionShape both = shape_with(gqa, causal, PassSelection::both);
          check_every_rank(validate_plan(plan_of(kind, both, p)),
                           2 * (p - 1) * b.kv + dkv_hops * b.dkv);
        }
      }
    }
  }
}

TEST_CASE("schedules: ring backward values for one shape, written out") {
  // S = 48K, P = 8, MHA: c = 6144, kv = 2*6144*32*128*2 = 100663296 bytes,
  // dkv = 201326592 bytes: 7 kv + 8 dkv = 2315255808 bytes.
  const AttentionShape bwd = shape_with(false, false, PassSelection::backward);
  const PlanReport report = validate_plan(plan_of("ring", bwd, 8));
  REQUIRE(report.ok());
  CHECK(report.max_bytes_received() == 2315255808.0);
}

TEST_CASE("schedules: ulysses backward moves (P-1)/P of dO in and of dQ, dKV out") {
  for (int p : {2, 4, 8}) {
    for (bool gqa : {false, true}) {
      INFO("P = " << p << (gqa ? " GQA" : " MHA"));
      const double f = (p - 1.0) / p;
      const AttentionShape bwd = shape_with(gqa, true, PassSelection::backward);
      const ChunkBytes b = chunk_bytes(bwd, p);
      // dQ and dKV go back finished, in the activation dtype (of, dkvf).
      check_every_rank(validate_plan(plan_of("ulysses", bwd, p)), f * (b.q + b.of + b.dkvf));
      const AttentionShape both = shape_with(gqa, true, PassSelection::both);
      check_every_rank(validate_plan(plan_of("ulysses", both, p)),
                       f * (b.q + b.kv + b.of) + f * (b.q + b.of + b.dkvf));
    }
  }
}

TEST_CASE("schedules: usp backward adds the ring's (r-1) kv + r dkv") {
  for (int u : {1, 2, 4, 8}) {
    for (bool gqa : {false, true}) {
      const int p = 8, r = p / u;
      INFO("u = " << u << (gqa ? " GQA" : " MHA"));
      const double f = (u - 1.0) / u;
      const double dkv_hops = r > 1 ? r : 0;
      const AttentionShape bwd = shape_with(gqa, true, PassSelection::backward);
      const ChunkBytes b = chunk_bytes(bwd, p);
      // dQ returns finished (of); dKV is one object that travels the ring
      // unfinished when r > 1 (fp32 partial on both legs), finished when r = 1.
      const double dkv = r > 1 ? b.dkv : b.dkvf;
      const double backward = f * (b.q + b.of + dkv) + (r - 1) * b.kv + dkv_hops * b.dkv;
      check_every_rank(validate_plan(plan_of("usp", bwd, p, u)), backward);
      const AttentionShape both = shape_with(gqa, true, PassSelection::both);
      const double forward = f * (b.q + b.kv + b.of) + (r - 1) * b.kv;
      check_every_rank(validate_plan(plan_of("usp", both, p, u)), forward + backward);
    }
  }
}

TEST_CASE("schedules: ring backward keeps Q-side tensors home and double-buffers KV, dKV") {
  const AttentionShape shape = shape_with(false, false, PassSelection::backward, 8 * 1024);
  const PlanReport report = validate_plan(plan_of("ring", shape, 8));
  REQUIRE(report.ok());
  const std::int64_t c = 1024;
  // Own Q, KV, O, LSE, dO, dQ, dKV plus at most two foreign KV and two foreign
  // dKV (current and incoming).
  const double own = 2 * shape.q_bytes(c) + shape.kv_bytes(c) + 2 * shape.o_accumulator_bytes(c) +
                     shape.lse_bytes(c) + shape.dkv_accumulator_bytes(c);
  for (const RankStats& r : report.ranks) {
    CHECK(r.peak_bytes <= own + 2 * shape.kv_bytes(c) + 2 * shape.dkv_accumulator_bytes(c));
    CHECK(r.peak_bytes > own);
  }
}

TEST_CASE("schedules: all-gather KV backward gathers KV again and reduce-scatters dKV") {
  // TransformerEngine's all-gather CP backward: (P-1) kv in (the forward kept only its own
  // chunk), then the reduce-scatter of the fp32 dK+dV partials: (P-1) dkv in and out.
  for (int p : {1, 2, 3, 4, 8}) {
    for (bool gqa : {false, true}) {
      for (bool causal : {false, true}) {
        INFO("P = " << p << (gqa ? " GQA" : " MHA") << (causal ? " causal" : ""));
        const AttentionShape bwd = shape_with(gqa, causal, PassSelection::backward);
        const ChunkBytes b = chunk_bytes(bwd, p);
        check_every_rank(validate_plan(plan_of("allgather_kv", bwd, p)), (p - 1) * (b.kv + b.dkv));
        const AttentionShape both = shape_with(gqa, causal, PassSelection::both);
        check_every_rank(validate_plan(plan_of("allgather_kv", both, p)),
                         2 * (p - 1) * b.kv + (p - 1) * b.dkv);
      }
    }
  }
}

TEST_CASE("schedules: all-gather KV backward values for one shape, written out") {
  // S = 48K, P = 8, MHA: kv = 100663296, dkv = 201326592 bytes: 7 (kv + dkv) = 2113929216.
  const AttentionShape bwd = shape_with(false, false, PassSelection::backward);
  const PlanReport report = validate_plan(plan_of("allgather_kv", bwd, 8));
  REQUIRE(report.ok());
  CHECK(report.max_bytes_received() == 2113929216.0);
}

TEST_CASE("schedules: double ring backward: KV as forward, dKV k hops per node and n across") {
  // P = n k; dKV hops: [k > 1] n k inner + [n > 1] n outer; with n = 1 this is the ring's P.
  for (auto [p, k] : {std::pair{8, 4}, std::pair{8, 2}, std::pair{8, 1}, std::pair{8, 8},
                      std::pair{6, 3}, std::pair{4, 2}, std::pair{1, 1}}) {
    for (bool causal : {false, true}) {
      const int n = p / k;
      INFO("P = " << p << " inner " << k << (causal ? " causal" : ""));
      const AttentionShape bwd = shape_with(true, causal, PassSelection::backward);
      const ChunkBytes b = chunk_bytes(bwd, p);
      const double hops = (k > 1 ? n * k : 0) + (n > 1 ? n : 0);
      check_every_rank(validate_plan(plan_of("double_ring", bwd, p, 0, k)),
                       (p - 1) * b.kv + hops * b.dkv);
      const AttentionShape both = shape_with(true, causal, PassSelection::both);
      check_every_rank(validate_plan(plan_of("double_ring", both, p, 0, k)),
                       2 * (p - 1) * b.kv + hops * b.dkv);
    }
  }
}

TEST_CASE("schedules: pass-q backward is refused, saying why") {
  const AttentionShape bwd = shape_with(false, true, PassSelection::backward);
  try {
    plan_of("pass_q", bwd, 4);
    FAIL("expected a ScheduleError");
  } catch (const ScheduleError& e) {
    CHECK(e.key() == "attention.pass");
    CHECK(std::string(e.what()).find("no implementation defines a backward") != std::string::npos);
  }
}
