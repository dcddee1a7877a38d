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
constexpr Index kKeyBlock = 64;

// Scratch of one (batch, head) task.
struct ForwardScratch {
  std::vector<float> k_transposed;  // [head_dim][kv_tokens]
  std::vector<float> v_rows;        // [kv_tokens][v_dim]
  std::vector<float> q_scaled;      // [head_dim]
  std::vector<float> acc;           // [v_dim]
  std::vector<float> scores;        // [kKeyBlock]
};

// One query row against its visible keys [keys.first, keys.end) with an online softmax.
void forward_row(const BlockShape& s, KeyRange keys, ForwardScratch& w, float* o_row,
                 float* lse_out) {
  const Index dim = s.head_dim;
  const Index v_dim = s.v_dim();
  float* acc = w.acc.data();
  float* scores = w.scores.data();
  std::fill(w.acc.begin(), w.acc.end(), 0.0F);
  float running_max = kMinusInfinity<float>;
  float running_sum = 0.0F;
  for (Index j0 = keys.first; j0 < keys.end; j0 += kKeyBlock) {
    const Index n = std::min(kKeyBlock, keys.end - j0);
    std::fill(scores, scores + n, 0.0F);
    for (Index d = 0; d < dim; ++d) {
      const float qd = w.q_scaled[d];
      const float* kt = w.k_transposed.data() + d * s.kv_tokens + j0;
      for (Index j = 0; j < n; ++j) scores[j] += qd * kt[j];
    }
    float block_max = kMinusInfinity<float>;
    for (Index j = 0; j < n; ++j) block_max = std::max(block_max, scores[j]);
    const float new_max = std::max(running_max, block_max);
    const float correction = std::exp(running_max - new_max);  // exp(-inf) = 0 on first block
    running_sum *= correction;
    for (Index d = 0; d < v_dim; ++d) acc[d] *= correction;
    for (Index j = 0; j < n; ++j) {
      const float p = std::exp(scores[j] - new_max);
      running_sum += p;
      const float* v = w.v_rows.data() + (j0 + j) * v_dim;
      for (Index d = 0; d < v_dim; ++d) acc[d] += p * v[d];
    }
    running_max = new_max;
  }
  if (keys.count() <= 0) {
    std::fill(o_row, o_row + v_dim, 0.0F);
    *lse_out = kMinusInfinity<float>;
    return;
  }
  const float inv_sum = 1.0F / running_sum;
  for (Index d = 0; d < v_dim; ++d) o_row[d] = acc[d] * inv_sum;
  *lse_out = running_max + std::log(running_sum);
}

}  // namespace

void attention_forward_cpu(const BlockShape& s, const PositionMask& mask, std::span<const float> q,
                           std::span<const float> k, std::span<const float> v, std::span<float> o,
                           std::span<float> lse, int threads) {
  validate_block(s, mask);
  detail::require_size(q, s.q_elements(), "q");
  detail::require_size(k, s.k_elements(), "k");
  detail::require_size(v, s.v_elements(), "v");
  detail::require_size(o, s.o_elements(), "o");
  detail::require_size(lse, s.lse_elements(), "lse");
  const float scale = 1.0F / std::sqrt(static_cast<float>(s.head_dim));
  std::vector<KeyRange> visible(static_cast<std::size_t>(s.q_tokens));
  for (Index i = 0; i < s.q_tokens; ++i) visible[i] = visible_key_range(s, mask, i);

  detail::run_parallel_tasks(s.batch * s.heads, threads, [&](Index task) {
    const Index b = task / s.heads;
    const Index h = task % s.heads;
    const Index g = h / s.group_size();
    ForwardScratch w;
    detail::pack_transposed(s, k, b, g, s.head_dim, w.k_transposed);
    detail::pack_rows(s, v, b, g, s.v_dim(), w.v_rows);
    w.q_scaled.resize(static_cast<std::size_t>(s.head_dim));
    w.acc.resize(static_cast<std::size_t>(s.v_dim()));
    w.scores.resize(static_cast<std::size_t>(kKeyBlock));
    for (Index i = 0; i < s.q_tokens; ++i) {
      const float* q_row = q.data() + detail::q_offset(s, b, i, h, s.head_dim);
      for (Index d = 0; d < s.head_dim; ++d) w.q_scaled[d] = q_row[d] * scale;
      forward_row(s, visible[i], w, o.data() + detail::q_offset(s, b, i, h, s.v_dim()),
                  lse.data() + detail::row_offset(s, b, h) + i);
    }
  });
}

}  // namespace tilesim::kernels
