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
  if (mask.window < 0 || mask.document_count < 0 ||
      (mask.document_count > 0 && mask.document_starts == nullptr)) {
    throw std::invalid_argument("attention block: window and document count must be >= 0");
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

namespace {

// Number of chunk keys at positions <= p: indices 0 .. n-1.
std::int64_t keys_at_most(const BlockShape& shape, const TokenPositions& kv, std::int64_t p) {
  const std::int64_t offset = p - kv.start;
  if (offset < 0) return 0;
  return std::min(shape.kv_tokens, offset / kv.stride + 1);
}

}  // namespace

KeyRange visible_key_range(const BlockShape& shape, const PositionMask& mask,
                           std::int64_t q_index) {
  if (mask.kind == MaskKind::full) return {0, shape.kv_tokens};
  const std::int64_t pq = mask.q.at(q_index);
  const std::int64_t end = keys_at_most(shape, mask.kv, pq);
  const std::int64_t first =
      std::min(end, keys_at_most(shape, mask.kv, mask.lowest_visible(pq) - 1));
  return {first, end};
}

std::int64_t visible_pairs(const BlockShape& shape, const PositionMask& mask) {
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < shape.q_tokens; ++i) {
    pairs += visible_key_range(shape, mask, i).count();
  }
  return pairs;
}

double forward_flops(const BlockShape& shape, const PositionMask& mask) {
  return 2.0 * static_cast<double>(shape.batch) * static_cast<double>(visible_pairs(shape, mask)) *
         static_cast<double>(shape.heads) * static_cast<double>(shape.head_dim + shape.v_dim());
}

}  // namespace tilesim::kernels
