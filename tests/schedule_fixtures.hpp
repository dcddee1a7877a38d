// Helpers shared by the schedule tests: shapes with a pass, closed-form chunk
// sizes (formulas.md notation) and plan building through the dispatcher.
#pragma once

#include <algorithm>
#include <string>

#include "sim/plan/validator.hpp"
#include "sim/schedules/schedule.hpp"
#include "tests/plan_fixtures.hpp"

namespace tilesim::testing {

inline AttentionShape shape_with(bool gqa, bool causal, PassSelection pass,
                                 std::int64_t seq_len = 48 * 1024) {
  AttentionShape s = gqa ? gqa_shape(seq_len, causal) : mha_shape(seq_len, causal);
  s.pass = pass;
  return s;
}

// Byte sizes of one chunk of c = S/P tokens with the default dtypes (bf16
// activations, fp32 partials, outputs in the activation dtype): q (= dO), kv,
// o (fp32 partial O or dQ), lse (fp32), dkv (fp32 partial), of (a finished O
// or dQ, bf16), dkvf (a finished dK+dV, bf16).
struct ChunkBytes {
  double q, kv, o, lse, dkv, of, dkvf;
};

inline ChunkBytes chunk_bytes(const AttentionShape& s, int ranks) {
  const double c = static_cast<double>(s.seq_len) / ranks;
  const double b = s.batch, h = s.heads, hkv = s.kv_heads, d = s.head_dim, e = 2.0;
  return {b * c * h * d * e,        2.0 * b * c * hkv * d * e,   b * c * h * d * 4.0,
          b * c * h * 4.0,          2.0 * b * c * hkv * d * 4.0, b * c * h * d * e,
          2.0 * b * c * hkv * d * e};
}

inline Plan plan_of(const std::string& kind, const AttentionShape& shape, int gpus, int ulysses = 0,
                    int inner = 0, Correction correction = Correction::separate) {
  ScheduleSpec spec;
  spec.kind = kind;
  spec.gpus = gpus;
  spec.ulysses_degree = ulysses;
  spec.inner_ring = inner;
  spec.correction = correction;
  return make_plan(shape, spec);
}

inline std::string errors_of(const PlanReport& report) {
  std::string out;
  for (const auto& e : report.errors) out += e + "\n";
  return out;
}

// max / mean of the per-rank compute FLOPs.
inline double compute_balance(const PlanReport& report) {
  double sum = 0.0, max = 0.0;
  for (const RankStats& r : report.ranks) {
    sum += r.compute_flops;
    max = std::max(max, r.compute_flops);
  }
  return max / (sum / static_cast<double>(report.ranks.size()));
}

}  // namespace tilesim::testing
