// A block's PositionMask written as the diagonal band cuDNN's fused attention (SDPA) takes.
//
// cuDNN masks by row i and column j of the block (not by token position): with the diagonal
// aligned top left, a causal band with right bound r keeps j <= i + r (r >= 0); aligned bottom
// right it keeps j <= i + (kv_tokens - q_tokens) + r. A row that keeps no column cannot be
// expressed (cuDNN's bounds are >= 0), so such leading rows are cut off instead: cuDNN runs on
// rows skipped_q_rows .. q_tokens - 1 and the skipped rows get O = 0, LSE = -inf.
//
// A causal PositionMask keeps key j for query i iff kv.start + j * kv.stride <= q.start + i *
// q.stride. When both strides equal s this is j <= i + d with d = floor((q.start - kv.start) / s):
// a band for contiguous chunks and for striped ones alike. Then
//   d >= kv_tokens - 1  -> full (row 0 already sees every key),
//   d <= -q_tokens      -> empty (no row sees a key),
//   d < 0               -> the first -d rows are skipped; the rest is a band with r = 0,
//   d >= 0              -> a band with r = d, bottom-right aligned with r = 0 where that is the
//                          same band (d = kv_tokens - q_tokens, the usual "causal with a KV
//                          prefix" cuDNN supports best).
// Different strides give no band unless the block is entirely full or entirely empty (checked
// on the extreme positions first): cuDNN cannot run it, `why` says so and the caller falls
// back to its own kernels. Sliding windows and packed documents are not expressed as bands here
// (unsupported; the CUDA kernels then refuse them too: the CPU backend runs them).
#pragma once

#include <cstdint>
#include <string>

#include "kernels/block_shape.hpp"

namespace tilesim::kernels {

enum class BandKind { full, causal, empty, unsupported };
enum class BandAlignment { top_left, bottom_right };

struct DiagonalBand {
  BandKind kind = BandKind::full;
  std::int64_t skipped_q_rows = 0;  // leading query rows outside cuDNN's call (see above)
  std::int64_t right_bound = 0;     // causal only, >= 0
  BandAlignment alignment = BandAlignment::top_left;
  std::string why;  // unsupported: the reason, for a user

  // Whether the band keeps key j for query row q_index (of the whole block, skipped rows
  // included); the definition above, for tests and checks.
  bool keeps(const BlockShape& shape, std::int64_t q_index, std::int64_t kv_index) const;
};

// Throws std::invalid_argument for an invalid shape or mask (validate_block).
DiagonalBand diagonal_band(const BlockShape& shape, const PositionMask& mask);

}  // namespace tilesim::kernels
