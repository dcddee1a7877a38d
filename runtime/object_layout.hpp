// How the runtime lays out the data of a plan object in memory.
//
// A chunk is a list of token blocks (sim/plan/token_layout.hpp). The runtime stores a chunk's
// data as the concatenation of its blocks, each block in the kernel layout of
// kernels/attention_shape.hpp for c = seq_len / blocks tokens:
//   q, o, d_o, dq : [batch][c][heads][head_dim]
//   kv, dkv       : K block [batch][c][kv_heads][head_dim], then V block, same shape
//   lse, delta    : [batch][heads][c]
// so that every (q block, kv block) pair is one kernel call on contiguous spans, and a block's
// token t sits at position block_start + t * block_stride.
#pragma once

#include <cstdint>

#include "kernels/attention_shape.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct ObjectExtent {
  int blocks = 0;                   // blocks of the object's chunk
  std::int64_t block_elements = 0;  // elements of one block (K and V together for kv)
  std::int64_t elements() const { return blocks * block_elements; }
};

// Elements of one block of a tensor of this plan (K and V together for kv and dkv).
std::int64_t block_elements(const Plan& plan, Tensor tensor);
ObjectExtent object_extent(const Plan& plan, int object);

// Kernel shapes of one q block x kv block pair and of one block of output rows.
kernels::BlockShape block_shape(const Plan& plan);
kernels::RowsShape block_rows(const Plan& plan);
// Positions of a layout block's tokens.
kernels::TokenPositions block_positions(const Plan& plan, int block);
// The kernel mask of a (q block, kv block) pair; std::nullopt-free: callers skip pairs whose
// plan mask is BlockMask::skip.
kernels::BlockMask kernel_mask(const Plan& plan, int q_block, int kv_block);

}  // namespace tilesim::runtime
