#include "runtime/object_layout.hpp"

namespace tilesim::runtime {

std::int64_t block_elements(const Plan& plan, Tensor tensor) {
  const AttentionShape& s = plan.shape;
  const std::int64_t c = plan.layout.block_tokens();
  switch (tensor) {
    case Tensor::q:
    case Tensor::o:
    case Tensor::d_o:
    case Tensor::dq:
      return s.batch * c * s.heads * s.head_dim;
    case Tensor::kv:
    case Tensor::dkv:
      return 2 * s.batch * c * s.kv_heads * s.head_dim;
    case Tensor::lse:
    case Tensor::delta:
      return s.batch * s.heads * c;
  }
  return 0;
}

ObjectExtent object_extent(const Plan& plan, int object) {
  const DataObject& obj = plan.object(object);
  const Chunk& chunk = plan.chunks.at(static_cast<std::size_t>(obj.chunk));
  return ObjectExtent{static_cast<int>(chunk.blocks.size()), block_elements(plan, obj.tensor)};
}

kernels::BlockShape block_shape(const Plan& plan) {
  const AttentionShape& s = plan.shape;
  const std::int64_t c = plan.layout.block_tokens();
  return kernels::BlockShape{s.batch, s.heads, s.kv_heads, s.head_dim, c, c};
}

kernels::RowsShape block_rows(const Plan& plan) { return kernels::output_rows(block_shape(plan)); }

kernels::TokenPositions block_positions(const Plan& plan, int block) {
  return kernels::TokenPositions{plan.layout.block_start(block), plan.layout.block_stride()};
}

kernels::BlockMask kernel_mask(const Plan& plan, int q_block, int kv_block) {
  return kernels::BlockMask{plan.shape.causal ? kernels::MaskKind::causal : kernels::MaskKind::full,
                            block_positions(plan, q_block), block_positions(plan, kv_block)};
}

}  // namespace tilesim::runtime
