#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/kv_packing.hpp"
#include "kernels/cpu/minus_infinity.hpp"
#include "kernels/cpu/parallel_tasks.hpp"
#include "kernels/cpu/span_checks.hpp"

namespace tilesim::kernels {
namespace {

using Index = std::int64_t;

// Scratch of one (batch, kv_head) task.
struct BackwardScratch {
  std::vector<float> k_rows;        // [kv_tokens][head_dim]
  std::vector<float> k_transposed;  // [head_dim][kv_tokens]
  std::vector<float> v_transposed;  // [v_dim][kv_tokens]
  std::vector<float> dk_rows;       // [kv_tokens][head_dim], this task's dK
  std::vector<float> dv_rows;       // [kv_tokens][v_dim], this task's dV
  std::vector<float> scores;        // [kv_tokens] scaled scores, then p
  std::vector<float> d_scores;      // [kv_tokens] dp, then scale * ds
  std::vector<float> dq_row;        // [head_dim]
};

struct RowInputs {
  const float* q;
  const float* o;
  const float* d_o;
  float lse;
  KeyRange keys;
};

// Contribution of one query row against its visible keys; dQ of the row goes to w.dq_row.
void backward_row(const BlockShape& s, float scale, const RowInputs& row, BackwardScratch& w) {
  const Index dim = s.head_dim;
  const Index v_dim = s.v_dim();
  const Index n = row.keys.count();
  const Index first = row.keys.first;
  float* p = w.scores.data();
  float* ds = w.d_scores.data();
  std::fill(p, p + n, 0.0F);
  std::fill(ds, ds + n, 0.0F);
  float d_row = 0.0F;
  for (Index d = 0; d < v_dim; ++d) d_row += row.d_o[d] * row.o[d];
  for (Index d = 0; d < dim; ++d) {
    const float qd = row.q[d] * scale;
    const float* kt = w.k_transposed.data() + d * s.kv_tokens + first;
    for (Index j = 0; j < n; ++j) p[j] += qd * kt[j];
  }
  for (Index d = 0; d < v_dim; ++d) {
    const float dod = row.d_o[d];
    const float* vt = w.v_transposed.data() + d * s.kv_tokens + first;
    for (Index j = 0; j < n; ++j) ds[j] += dod * vt[j];
  }
  for (Index j = 0; j < n; ++j) {
    p[j] = std::exp(p[j] - row.lse);
    ds[j] = scale * p[j] * (ds[j] - d_row);
  }
  std::fill(w.dq_row.begin(), w.dq_row.end(), 0.0F);
  float* dq = w.dq_row.data();
  for (Index j = 0; j < n; ++j) {
    const float* kr = w.k_rows.data() + (first + j) * dim;
    float* dk = w.dk_rows.data() + (first + j) * dim;
    float* dv = w.dv_rows.data() + (first + j) * v_dim;
    const float dsj = ds[j];
    const float pj = p[j];
    for (Index d = 0; d < dim; ++d) {
      dq[d] += dsj * kr[d];
      dk[d] += dsj * row.q[d];
    }
    for (Index d = 0; d < v_dim; ++d) dv[d] += pj * row.d_o[d];
  }
}

}  // namespace

void attention_backward_cpu(const BlockShape& s, const PositionMask& mask, std::span<const float> q,
                            std::span<const float> k, std::span<const float> v,
                            std::span<const float> o, std::span<const float> d_o,
                            std::span<const float> lse, std::span<float> dq, std::span<float> dk,
                            std::span<float> dv, int threads) {
  validate_block(s, mask);
  detail::require_size(q, s.q_elements(), "q");
  detail::require_size(k, s.k_elements(), "k");
  detail::require_size(v, s.v_elements(), "v");
  detail::require_size(o, s.o_elements(), "o");
  detail::require_size(d_o, s.o_elements(), "d_o");
  detail::require_size(lse, s.lse_elements(), "lse");
  detail::require_size(dq, s.q_elements(), "dq");
  detail::require_size(dk, s.k_elements(), "dk");
  detail::require_size(dv, s.v_elements(), "dv");
  const float scale = 1.0F / std::sqrt(static_cast<float>(s.head_dim));
  std::vector<KeyRange> visible(static_cast<std::size_t>(s.q_tokens));
  for (Index i = 0; i < s.q_tokens; ++i) visible[i] = visible_key_range(s, mask, i);
  const Index v_dim = s.v_dim();

  // Tasks own (batch, kv_head): the dQ rows of the group's heads and the dK/dV rows of the kv
  // head are written by this task only.
  detail::run_parallel_tasks(s.batch * s.kv_heads, threads, [&](Index task) {
    const Index b = task / s.kv_heads;
    const Index g = task % s.kv_heads;
    BackwardScratch w;
    detail::pack_rows(s, k, b, g, s.head_dim, w.k_rows);
    detail::pack_transposed(s, k, b, g, s.head_dim, w.k_transposed);
    detail::pack_transposed(s, v, b, g, v_dim, w.v_transposed);
    w.dk_rows.assign(static_cast<std::size_t>(s.kv_tokens * s.head_dim), 0.0F);
    w.dv_rows.assign(static_cast<std::size_t>(s.kv_tokens * v_dim), 0.0F);
    w.scores.resize(static_cast<std::size_t>(s.kv_tokens));
    w.d_scores.resize(static_cast<std::size_t>(s.kv_tokens));
    w.dq_row.resize(static_cast<std::size_t>(s.head_dim));
    for (Index h = g * s.group_size(); h < (g + 1) * s.group_size(); ++h) {
      for (Index i = 0; i < s.q_tokens; ++i) {
        const float row_lse = lse[detail::row_offset(s, b, h) + i];
        if (visible[i].count() <= 0 || row_lse == kMinusInfinity<float>) continue;
        const Index at = detail::q_offset(s, b, i, h, s.head_dim);
        const Index at_v = detail::q_offset(s, b, i, h, v_dim);
        backward_row(
            s, scale,
            RowInputs{q.data() + at, o.data() + at_v, d_o.data() + at_v, row_lse, visible[i]}, w);
        float* dq_out = dq.data() + at;
        for (Index d = 0; d < s.head_dim; ++d) dq_out[d] += w.dq_row[d];
      }
    }
    for (Index j = 0; j < s.kv_tokens; ++j) {
      const Index at_k = detail::kv_offset(s, b, j, g, s.head_dim);
      for (Index d = 0; d < s.head_dim; ++d) dk[at_k + d] += w.dk_rows[j * s.head_dim + d];
      const Index at_v = detail::kv_offset(s, b, j, g, v_dim);
      for (Index d = 0; d < v_dim; ++d) dv[at_v + d] += w.dv_rows[j * v_dim + d];
    }
  });
}

}  // namespace tilesim::kernels
