// How the runtime lays out the data of a plan object in memory.
//
// A chunk is a list of token blocks (sim/plan/token_layout.hpp). The runtime stores a chunk's
// data as the concatenation of its blocks, each block in the kernel layout of
// kernels/attention_shape.hpp for c = seq_len / blocks tokens:
//   q, dq         : [batch][c][heads][head_dim]
//   o, d_o        : [batch][c][heads][v_head_dim]
//   kv, dkv       : K block [batch][c][kv_heads][head_dim], then V block
//                   [batch][c][kv_heads][v_head_dim]
//   lse, delta    : [batch][heads][c]
// so that every (q block, kv block) pair is one kernel call on contiguous spans, and a block's
// token t sits at position block_start + t * block_stride.
//
// Head groups (Plan::head_groups = g > 1, Ulysses and USP): an object of a chunk with head
// group h holds only query heads h*H/g .. (h+1)*H/g - 1 and kv heads h*Hkv/g .. (h+1)*Hkv/g - 1,
// so `heads` and `kv_heads` above are H/g and Hkv/g. Local query head i still reads local kv
// head i / (H/Hkv): the GQA grouping of the slice is that of the full heads. When g > Hkv
// (g a multiple of Hkv: KV heads replicated), a group holds one KV head, h*Hkv/g, which all its
// H/g query heads read.
#pragma once

#include <cstdint>

#include "kernels/block_shape.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct ObjectExtent {
  int blocks = 0;                   // blocks of the object's chunk
  std::int64_t block_elements = 0;  // elements of one block (K and V together for kv)
  std::int64_t elements() const { return blocks * block_elements; }
};

// The heads one chunk's objects hold: [q_begin, q_begin + q_count) of the query heads and
// [kv_begin, kv_begin + kv_count) of the kv heads.
struct HeadRange {
  std::int64_t q_begin = 0;
  std::int64_t q_count = 0;
  std::int64_t kv_begin = 0;
  std::int64_t kv_count = 0;
};

// Throws std::invalid_argument when heads or kv_heads do not split into the plan's head groups.
HeadRange head_range(const Plan& plan, int chunk);

// Elements of one block of a tensor of this plan (K and V together for kv and dkv), for the
// heads of one head group.
std::int64_t block_elements(const Plan& plan, Tensor tensor);
ObjectExtent object_extent(const Plan& plan, int object);

// Kernel shapes of one q block x kv block pair and of one block of output rows, for the heads
// of one head group (what a compute op of the plan works on).
kernels::BlockShape block_shape(const Plan& plan);
kernels::RowsShape block_rows(const Plan& plan);
// Positions of a layout block's tokens.
kernels::TokenPositions block_positions(const Plan& plan, int block);
// The kernel mask of a (q block, kv block) pair; callers skip pairs whose plan mask is
// BlockPairMask::skip.
kernels::PositionMask kernel_mask(const Plan& plan, int q_block, int kv_block);
// The plan's mask (causal, window, documents) between two runs of token positions; the mask
// points into plan.shape.mask's document starts, so it must not outlive the plan.
kernels::PositionMask kernel_mask(const Plan& plan, kernels::TokenPositions q,
                                  kernels::TokenPositions kv);

}  // namespace tilesim::runtime
