// Copies one (batch, kv_head) slice of a K or V chunk [batch][kv_tokens][kv_heads][head_dim]
// into contiguous scratch, row-major [kv_tokens][head_dim] or transposed [head_dim][kv_tokens],
// so that the CPU kernels' inner loops run over contiguous memory.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels::detail {

inline std::int64_t kv_offset(const BlockShape& s, std::int64_t b, std::int64_t j, std::int64_t g) {
  return ((b * s.kv_tokens + j) * s.kv_heads + g) * s.head_dim;
}

inline std::int64_t q_offset(const BlockShape& s, std::int64_t b, std::int64_t i, std::int64_t h) {
  return ((b * s.q_tokens + i) * s.heads + h) * s.head_dim;
}

inline std::int64_t row_offset(const BlockShape& s, std::int64_t b, std::int64_t h) {
  return (b * s.heads + h) * s.q_tokens;
}

// dst[j * head_dim + d] = src[b, j, g, d]
inline void pack_rows(const BlockShape& s, std::span<const float> src, std::int64_t b,
                      std::int64_t g, std::vector<float>& dst) {
  dst.resize(static_cast<std::size_t>(s.kv_tokens * s.head_dim));
  for (std::int64_t j = 0; j < s.kv_tokens; ++j) {
    const float* from = src.data() + kv_offset(s, b, j, g);
    float* to = dst.data() + j * s.head_dim;
    for (std::int64_t d = 0; d < s.head_dim; ++d) to[d] = from[d];
  }
}

// dst[d * kv_tokens + j] = src[b, j, g, d]
inline void pack_transposed(const BlockShape& s, std::span<const float> src, std::int64_t b,
                            std::int64_t g, std::vector<float>& dst) {
  dst.resize(static_cast<std::size_t>(s.kv_tokens * s.head_dim));
  for (std::int64_t j = 0; j < s.kv_tokens; ++j) {
    const float* from = src.data() + kv_offset(s, b, j, g);
    for (std::int64_t d = 0; d < s.head_dim; ++d) dst[d * s.kv_tokens + j] = from[d];
  }
}

}  // namespace tilesim::kernels::detail
