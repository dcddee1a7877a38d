#include "sim/plan/token_layout.hpp"

namespace tilesim {

std::string_view to_string(BlockPairMask mask) {
  switch (mask) {
    case BlockPairMask::full:
      return "full";
    case BlockPairMask::cut:
      return "cut";
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

BlockPairMask TokenLayout::mask(int q_block, int kv_block, const AttentionMask& mask) const {
  const double pairs = unmasked_pairs(q_block, kv_block, mask);
  if (pairs <= 0) return BlockPairMask::skip;
  const auto c = static_cast<double>(block_tokens());
  return pairs < c * c ? BlockPairMask::cut : BlockPairMask::full;
}

double TokenLayout::unmasked_pairs(int q_block, int kv_block, const AttentionMask& mask) const {
  return mask.pairs(run(q_block), run(kv_block));
}

}  // namespace tilesim
