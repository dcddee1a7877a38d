#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/cpu/attention_cpu.hpp"
#include "kernels/cpu/minus_infinity.hpp"
#include "kernels/cpu/span_checks.hpp"

namespace tilesim::kernels {
namespace {

using Index = std::int64_t;

Index o_row_offset(const RowsShape& r, Index b, Index t, Index h) {
  return ((b * r.tokens + t) * r.heads + h) * r.head_dim;
}

}  // namespace

void merge_partials_cpu(const RowsShape& rows, std::span<const PartialOutput> partials,
                        std::span<float> o, std::span<float> lse) {
  validate_rows(rows);
  detail::require_size(o, rows.o_elements(), "o");
  detail::require_size(lse, rows.lse_elements(), "lse");
  for (const PartialOutput& part : partials) {
    detail::require_size(part.o, rows.o_elements(), "partial o");
    detail::require_size(part.lse, rows.lse_elements(), "partial lse");
  }
  for (Index b = 0; b < rows.batch; ++b) {
    for (Index h = 0; h < rows.heads; ++h) {
      for (Index t = 0; t < rows.tokens; ++t) {
        const Index row = (b * rows.heads + h) * rows.tokens + t;
        float* out = o.data() + o_row_offset(rows, b, t, h);
        float max_lse = kMinusInfinity<float>;
        for (const PartialOutput& part : partials) max_lse = std::max(max_lse, part.lse[row]);
        std::fill(out, out + rows.head_dim, 0.0F);
        if (max_lse == kMinusInfinity<float>) {
          lse[row] = kMinusInfinity<float>;
          continue;
        }
        float sum = 0.0F;
        for (const PartialOutput& part : partials) sum += std::exp(part.lse[row] - max_lse);
        const float merged = max_lse + std::log(sum);
        for (const PartialOutput& part : partials) {
          const float weight = std::exp(part.lse[row] - merged);
          if (weight == 0.0F) continue;
          const float* in = part.o.data() + o_row_offset(rows, b, t, h);
          for (Index d = 0; d < rows.head_dim; ++d) out[d] += weight * in[d];
        }
        lse[row] = merged;
      }
    }
  }
}

void accumulate_partial_cpu(const RowsShape& rows, std::span<const float> o_block,
                            std::span<const float> lse_block, std::span<float> o_acc,
                            std::span<float> lse_acc) {
  validate_rows(rows);
  detail::require_size(o_block, rows.o_elements(), "o_block");
  detail::require_size(lse_block, rows.lse_elements(), "lse_block");
  detail::require_size(o_acc, rows.o_elements(), "o_acc");
  detail::require_size(lse_acc, rows.lse_elements(), "lse_acc");
  for (Index b = 0; b < rows.batch; ++b) {
    for (Index h = 0; h < rows.heads; ++h) {
      for (Index t = 0; t < rows.tokens; ++t) {
        const Index row = (b * rows.heads + h) * rows.tokens + t;
        const float lse_new = lse_block[row];
        if (lse_new == kMinusInfinity<float>) continue;  // the block adds nothing to this row
        const float lse_old = lse_acc[row];
        const float max_lse = std::max(lse_old, lse_new);
        const float merged =
            max_lse + std::log(std::exp(lse_old - max_lse) + std::exp(lse_new - max_lse));
        const float w_old = std::exp(lse_old - merged);  // 0 when the accumulator is empty
        const float w_new = std::exp(lse_new - merged);
        float* acc = o_acc.data() + o_row_offset(rows, b, t, h);
        const float* in = o_block.data() + o_row_offset(rows, b, t, h);
        for (Index d = 0; d < rows.head_dim; ++d) acc[d] = w_old * acc[d] + w_new * in[d];
        lse_acc[row] = merged;
      }
    }
  }
}

}  // namespace tilesim::kernels
