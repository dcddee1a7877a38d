// How the sequence is cut into blocks, and which (query, key) pairs of two
// blocks survive the attention mask (attention_mask.hpp has the closed forms).
//
// The S tokens are cut into N equal blocks of c = S/N tokens.
//   contiguous: block i holds positions [i*c, (i+1)*c)
//   striped:    block i holds positions i, i+N, i+2N, ... (c of them)
// A chunk (what one rank owns) is a list of blocks; zigzag gives rank r the
// contiguous blocks r and 2P-1-r. A block pair is skip (no pair attends), full (all
// c^2) or cut (some). Under a causal mask a query at position pq
// sees keys at positions pk <= pq, so for blocks (qi, ki):
//   contiguous: qi > ki -> c^2 pairs, qi == ki -> c(c+1)/2, qi < ki -> 0
//   striped:    ki <= qi -> c(c+1)/2,  ki > qi -> c(c-1)/2
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/plan/attention_mask.hpp"

namespace tilesim {

enum class LayoutKind { contiguous, striped };
enum class BlockPairMask { full, cut, skip };

std::string_view to_string(BlockPairMask mask);

struct TokenLayout {
  LayoutKind kind = LayoutKind::contiguous;
  std::int64_t seq_len = 0;
  int blocks = 1;

  std::int64_t block_tokens() const { return seq_len / blocks; }
  // First position and stride of block i (positions start + k*stride).
  std::int64_t block_start(int block) const;
  std::int64_t block_stride() const;
  // Number of (query, key) pairs of blocks (qi, ki) that attend.
  double unmasked_pairs(int q_block, int kv_block, const AttentionMask& mask) const;
  BlockPairMask mask(int q_block, int kv_block, const AttentionMask& mask) const;
  PositionRun run(int block) const { return {block_start(block), block_stride(), block_tokens()}; }
};

}  // namespace tilesim
