#include "sim/plan/token_layout.hpp"

namespace tilesim {

std::string_view to_string(BlockPairMask mask) {
  switch (mask) {
    case BlockPairMask::full:
      return "full";
    case BlockPairMask::causal:
      return "causal";
    case BlockPairMask::skip:
      return "skip";
  }
  return "?";
}

std::int64_t TokenLayout::block_start(int block) const {
  return kind == LayoutKind::contiguous ? block * block_tokens() : block;
}

std::int64_t TokenLayout::block_stride() const {
  return kind == LayoutKind::contiguous ? 1 : blocks;
}

BlockPairMask TokenLayout::mask(int q_block, int kv_block, bool causal) const {
  if (!causal) return BlockPairMask::full;
  if (kind == LayoutKind::contiguous) {
    if (q_block > kv_block) return BlockPairMask::full;
    return q_block == kv_block ? BlockPairMask::causal : BlockPairMask::skip;
  }
  // Striped blocks interleave, so every pair is a (shifted) triangle; with one
  // token per block the strictly-upper pair is empty.
  if (kv_block > q_block && block_tokens() == 1) return BlockPairMask::skip;
  return BlockPairMask::causal;
}

double TokenLayout::unmasked_pairs(int q_block, int kv_block, bool causal) const {
  const auto c = static_cast<double>(block_tokens());
  if (!causal) return c * c;
  if (kind == LayoutKind::contiguous) {
    if (q_block > kv_block) return c * c;
    return q_block == kv_block ? c * (c + 1) / 2 : 0.0;
  }
  return kv_block <= q_block ? c * (c + 1) / 2 : c * (c - 1) / 2;
}

}  // namespace tilesim
