#include "kernels/cpu/reference_attention.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/minus_infinity.hpp"
#include "kernels/cpu/span_checks.hpp"

namespace tilesim::kernels {
namespace {

using detail::require_size;
using Index = std::int64_t;

// Flat indices into the documented layouts.
struct Indexer {
  const BlockShape& s;
  Index q(Index b, Index i, Index h, Index d) const {  // Q, dQ
    return ((b * s.q_tokens + i) * s.heads + h) * s.head_dim + d;
  }
  Index o(Index b, Index i, Index h, Index d) const {  // O, dO
    return ((b * s.q_tokens + i) * s.heads + h) * s.v_dim() + d;
  }
  Index k(Index b, Index j, Index g, Index d) const {
    return ((b * s.kv_tokens + j) * s.kv_heads + g) * s.head_dim + d;
  }
  Index v(Index b, Index j, Index g, Index d) const {
    return ((b * s.kv_tokens + j) * s.kv_heads + g) * s.v_dim() + d;
  }
  Index row(Index b, Index h, Index i) const { return (b * s.heads + h) * s.q_tokens + i; }
};

double score(const BlockShape& s, const Indexer& at, std::span<const double> q,
             std::span<const double> k, Index b, Index i, Index h, Index j) {
  const Index g = h / s.group_size();
  double dot = 0.0;
  for (Index d = 0; d < s.head_dim; ++d) dot += q[at.q(b, i, h, d)] * k[at.k(b, j, g, d)];
  return dot / std::sqrt(static_cast<double>(s.head_dim));
}

}  // namespace

void reference_forward(const BlockShape& s, const PositionMask& mask, std::span<const double> q,
                       std::span<const double> k, std::span<const double> v, std::span<double> o,
                       std::span<double> lse) {
  validate_block(s, mask);
  require_size(q, s.q_elements(), "q");
  require_size(k, s.k_elements(), "k");
  require_size(v, s.v_elements(), "v");
  require_size(o, s.o_elements(), "o");
  require_size(lse, s.lse_elements(), "lse");
  const Indexer at{s};
  for (Index b = 0; b < s.batch; ++b) {
    for (Index h = 0; h < s.heads; ++h) {
      const Index g = h / s.group_size();
      for (Index i = 0; i < s.q_tokens; ++i) {
        double max_score = kMinusInfinity<double>;
        for (Index j = 0; j < s.kv_tokens; ++j) {
          if (mask.visible(i, j)) {
            const double sc = score(s, at, q, k, b, i, h, j);
            if (sc > max_score) max_score = sc;
          }
        }
        for (Index d = 0; d < s.v_dim(); ++d) o[at.o(b, i, h, d)] = 0.0;
        if (max_score == kMinusInfinity<double>) {
          lse[at.row(b, h, i)] = kMinusInfinity<double>;
          continue;
        }
        double sum = 0.0;
        for (Index j = 0; j < s.kv_tokens; ++j) {
          if (!mask.visible(i, j)) continue;
          const double p = std::exp(score(s, at, q, k, b, i, h, j) - max_score);
          sum += p;
          for (Index d = 0; d < s.v_dim(); ++d) o[at.o(b, i, h, d)] += p * v[at.v(b, j, g, d)];
        }
        for (Index d = 0; d < s.v_dim(); ++d) o[at.o(b, i, h, d)] /= sum;
        lse[at.row(b, h, i)] = max_score + std::log(sum);
      }
    }
  }
}

void reference_backward(const BlockShape& s, const PositionMask& mask, std::span<const double> q,
                        std::span<const double> k, std::span<const double> v,
                        std::span<const double> o, std::span<const double> d_o,
                        std::span<const double> lse, std::span<double> dq, std::span<double> dk,
                        std::span<double> dv) {
  validate_block(s, mask);
  require_size(q, s.q_elements(), "q");
  require_size(k, s.k_elements(), "k");
  require_size(v, s.v_elements(), "v");
  require_size(o, s.o_elements(), "o");
  require_size(d_o, s.o_elements(), "d_o");
  require_size(lse, s.lse_elements(), "lse");
  require_size(dq, s.q_elements(), "dq");
  require_size(dk, s.k_elements(), "dk");
  require_size(dv, s.v_elements(), "dv");
  const Indexer at{s};
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  for (Index b = 0; b < s.batch; ++b) {
    for (Index h = 0; h < s.heads; ++h) {
      const Index g = h / s.group_size();
      for (Index i = 0; i < s.q_tokens; ++i) {
        const double row_lse = lse[at.row(b, h, i)];
        if (row_lse == kMinusInfinity<double>)
          continue;  // the row sees no key anywhere: no gradient
        double d_row = 0.0;
        for (Index d = 0; d < s.v_dim(); ++d) d_row += d_o[at.o(b, i, h, d)] * o[at.o(b, i, h, d)];
        for (Index j = 0; j < s.kv_tokens; ++j) {
          if (!mask.visible(i, j)) continue;
          const double p = std::exp(score(s, at, q, k, b, i, h, j) - row_lse);
          double dp = 0.0;
          for (Index d = 0; d < s.v_dim(); ++d) dp += d_o[at.o(b, i, h, d)] * v[at.v(b, j, g, d)];
          const double ds = p * (dp - d_row);
          for (Index d = 0; d < s.head_dim; ++d) {
            dq[at.q(b, i, h, d)] += scale * ds * k[at.k(b, j, g, d)];
            dk[at.k(b, j, g, d)] += scale * ds * q[at.q(b, i, h, d)];
          }
          for (Index d = 0; d < s.v_dim(); ++d) dv[at.v(b, j, g, d)] += p * d_o[at.o(b, i, h, d)];
        }
      }
    }
  }
}

void reference_merge(const RowsShape& rows, std::span<const ReferencePartial> partials,
                     std::span<double> o, std::span<double> lse) {
  validate_rows(rows);
  require_size(o, rows.o_elements(), "o");
  require_size(lse, rows.lse_elements(), "lse");
  for (const ReferencePartial& part : partials) {
    require_size(part.o, rows.o_elements(), "partial o");
    require_size(part.lse, rows.lse_elements(), "partial lse");
  }
  for (Index b = 0; b < rows.batch; ++b) {
    for (Index t = 0; t < rows.tokens; ++t) {
      for (Index h = 0; h < rows.heads; ++h) {
        const Index row = (b * rows.heads + h) * rows.tokens + t;
        const Index o_base = ((b * rows.tokens + t) * rows.heads + h) * rows.head_dim;
        double max_lse = kMinusInfinity<double>;
        for (const ReferencePartial& part : partials) {
          if (part.lse[row] > max_lse) max_lse = part.lse[row];
        }
        for (Index d = 0; d < rows.head_dim; ++d) o[o_base + d] = 0.0;
        if (max_lse == kMinusInfinity<double>) {
          lse[row] = kMinusInfinity<double>;
          continue;
        }
        double sum = 0.0;
        for (const ReferencePartial& part : partials) sum += std::exp(part.lse[row] - max_lse);
        const double merged = max_lse + std::log(sum);
        for (const ReferencePartial& part : partials) {
          const double weight = std::exp(part.lse[row] - merged);
          for (Index d = 0; d < rows.head_dim; ++d) o[o_base + d] += weight * part.o[o_base + d];
        }
        lse[row] = merged;
      }
    }
  }
}

}  // namespace tilesim::kernels
