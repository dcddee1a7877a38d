#include "kernels/block_shape.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tilesim::kernels {

void validate_block(const BlockShape& shape, const PositionMask& mask) {
  if (shape.batch < 1 || shape.heads < 1 || shape.kv_heads < 1 || shape.head_dim < 1 ||
      shape.q_tokens < 1 || shape.kv_tokens < 1) {
    throw std::invalid_argument("attention block: every size must be >= 1");
  }
  if (shape.heads % shape.kv_heads != 0) {
    throw std::invalid_argument("attention block: heads (" + std::to_string(shape.heads) +
                                ") must be a multiple of kv_heads (" +
                                std::to_string(shape.kv_heads) + ")");
  }
  if (mask.q.stride < 1 || mask.kv.stride < 1) {
    throw std::invalid_argument("attention block: token position strides must be >= 1");
  }
}

void validate_rows(const RowsShape& rows) {
  if (rows.batch < 1 || rows.tokens < 1 || rows.heads < 1 || rows.head_dim < 1) {
    throw std::invalid_argument("attention rows: every size must be >= 1");
  }
}

std::int64_t visible_key_count(const BlockShape& shape, const PositionMask& mask,
                               std::int64_t q_index) {
  if (mask.kind == MaskKind::full) return shape.kv_tokens;
  const std::int64_t offset = mask.q.at(q_index) - mask.kv.start;
  if (offset < 0) return 0;
  return std::min(shape.kv_tokens, offset / mask.kv.stride + 1);
}

std::int64_t visible_pairs(const BlockShape& shape, const PositionMask& mask) {
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < shape.q_tokens; ++i) pairs += visible_key_count(shape, mask, i);
  return pairs;
}

double forward_flops(const BlockShape& shape, const PositionMask& mask) {
  return 2.0 * static_cast<double>(shape.batch) * static_cast<double>(visible_pairs(shape, mask)) *
         static_cast<double>(shape.heads) * static_cast<double>(shape.head_dim + shape.v_dim());
}

}  // namespace tilesim::kernels
