// Copies one (batch, kv_head) slice of a K or V chunk [batch][kv_tokens][kv_heads][dim]
// into contiguous scratch, row-major [kv_tokens][dim] or transposed [dim][kv_tokens],
// so that the CPU kernels' inner loops run over contiguous memory. dim is head_dim for K
// and v_dim for V (kernels/block_shape.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels::detail {

inline std::int64_t kv_offset(const BlockShape& s, std::int64_t b, std::int64_t j, std::int64_t g,
                              std::int64_t dim) {
  return ((b * s.kv_tokens + j) * s.kv_heads + g) * dim;
}

// Offset of row (b, i, h) of a query-side tensor with `dim` per head (Q, dQ: head_dim; O, dO:
// v_dim).
inline std::int64_t q_offset(const BlockShape& s, std::int64_t b, std::int64_t i, std::int64_t h,
                             std::int64_t dim) {
  return ((b * s.q_tokens + i) * s.heads + h) * dim;
}

inline std::int64_t row_offset(const BlockShape& s, std::int64_t b, std::int64_t h) {
  return (b * s.heads + h) * s.q_tokens;
}

// dst[j * dim + d] = src[b, j, g, d]
inline void pack_rows(const BlockShape& s, std::span<const float> src, std::int64_t b,
                      std::int64_t g, std::int64_t dim, std::vector<float>& dst) {
  dst.resize(static_cast<std::size_t>(s.kv_tokens * dim));
  for (std::int64_t j = 0; j < s.kv_tokens; ++j) {
    const float* from = src.data() + kv_offset(s, b, j, g, dim);
    float* to = dst.data() + j * dim;
    for (std::int64_t d = 0; d < dim; ++d) to[d] = from[d];
  }
}

// dst[d * kv_tokens + j] = src[b, j, g, d]
inline void pack_transposed(const BlockShape& s, std::span<const float> src, std::int64_t b,
                            std::int64_t g, std::int64_t dim, std::vector<float>& dst) {
  dst.resize(static_cast<std::size_t>(s.kv_tokens * dim));
  for (std::int64_t j = 0; j < s.kv_tokens; ++j) {
    const float* from = src.data() + kv_offset(s, b, j, g, dim);
    for (std::int64_t d = 0; d < dim; ++d) dst[d * s.kv_tokens + j] = from[d];
  }
}

}  // namespace tilesim::kernels::detail
