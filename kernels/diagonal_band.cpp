#include "kernels/diagonal_band.hpp"

#include <string>

namespace tilesim::kernels {
namespace {

// floor(a / b) for b > 0 (C++ division truncates toward zero).
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  const std::int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace

bool DiagonalBand::keeps(const BlockShape& shape, std::int64_t q_index,
                         std::int64_t kv_index) const {
  switch (kind) {
    case BandKind::full:
      return true;
    case BandKind::empty:
    case BandKind::unsupported:
      return false;
    case BandKind::causal:
      break;
  }
  if (q_index < skipped_q_rows) return false;
  const std::int64_t row = q_index - skipped_q_rows;
  const std::int64_t rows = shape.q_tokens - skipped_q_rows;
  const std::int64_t shift = alignment == BandAlignment::bottom_right ? shape.kv_tokens - rows : 0;
  return kv_index <= row + shift + right_bound;
}

DiagonalBand diagonal_band(const BlockShape& shape, const PositionMask& mask) {
  validate_block(shape, mask);
  DiagonalBand band;
  if (mask.kind == MaskKind::full) return band;
  if (!mask.plain()) {
    band.kind = BandKind::unsupported;
    band.why = "a sliding window or packed documents is not one diagonal band";
    return band;
  }
  const std::int64_t first_q = mask.q.at(0);
  const std::int64_t last_q = mask.q.at(shape.q_tokens - 1);
  const std::int64_t first_kv = mask.kv.at(0);
  const std::int64_t last_kv = mask.kv.at(shape.kv_tokens - 1);
  if (last_kv <= first_q) return band;  // every key precedes every query
  if (first_kv > last_q) {
    band.kind = BandKind::empty;
    return band;
  }
  if (mask.q.stride != mask.kv.stride) {
    band.kind = BandKind::unsupported;
    band.why = "query stride " + std::to_string(mask.q.stride) + " and key stride " +
               std::to_string(mask.kv.stride) +
               " differ: the visible keys are not a diagonal band cuDNN can express";
    return band;
  }
  // Neither full nor empty, so -q_tokens < d < kv_tokens - 1.
  const std::int64_t d = floor_div(mask.q.start - mask.kv.start, mask.q.stride);
  band.kind = BandKind::causal;
  if (d < 0) {
    band.skipped_q_rows = -d;
  } else if (d > 0 && d == shape.kv_tokens - shape.q_tokens) {
    band.alignment = BandAlignment::bottom_right;
  } else {
    band.right_bound = d;
  }
  return band;
}

}  // namespace tilesim::kernels
