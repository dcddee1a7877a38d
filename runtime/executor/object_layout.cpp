#include "runtime/executor/object_layout.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace tilesim::runtime {
namespace {

std::int64_t group_heads(const Plan& plan, std::int64_t heads, const char* what) {
  if (plan.head_groups < 1 || heads % plan.head_groups != 0) {
    throw std::invalid_argument(
        fmt::format("{} {} do not split into {} head groups", what, heads, plan.head_groups));
  }
  return heads / plan.head_groups;
}

// KV heads of one head group: kv_heads / g, or one whole KV head replicated over g / kv_heads
// groups when g is a multiple of kv_heads (Ulysses beyond the KV-head count).
std::int64_t group_kv_heads(const Plan& plan) {
  const std::int64_t kv = plan.shape.kv_heads;
  if (plan.head_groups > kv && plan.head_groups % kv == 0) return 1;
  return group_heads(plan, kv, "kv_heads");
}

}  // namespace

HeadRange head_range(const Plan& plan, int chunk) {
  const std::int64_t h = plan.chunks.at(static_cast<std::size_t>(chunk)).head_group;
  const std::int64_t q = group_heads(plan, plan.shape.heads, "heads");
  const std::int64_t kv = group_kv_heads(plan);
  return HeadRange{h * q, q, h * plan.shape.kv_heads / plan.head_groups, kv};
}

std::int64_t block_elements(const Plan& plan, Tensor tensor) {
  const AttentionShape& s = plan.shape;
  const std::int64_t c = plan.layout.block_tokens();
  const std::int64_t heads = group_heads(plan, s.heads, "heads");
  const std::int64_t kv_heads = group_kv_heads(plan);
  switch (tensor) {
    case Tensor::q:
    case Tensor::dq:
      return s.batch * c * heads * s.head_dim;
    case Tensor::o:
    case Tensor::d_o:
      return s.batch * c * heads * s.value_dim();
    case Tensor::kv:
    case Tensor::dkv:
      return s.batch * c * kv_heads * (s.head_dim + s.value_dim());
    case Tensor::lse:
    case Tensor::delta:
      return s.batch * heads * c;
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
  return kernels::BlockShape{
      s.batch,      group_heads(plan, s.heads, "heads"), group_kv_heads(plan), s.head_dim, c, c,
      s.value_dim()};
}

kernels::RowsShape block_rows(const Plan& plan) { return kernels::output_rows(block_shape(plan)); }

kernels::TokenPositions block_positions(const Plan& plan, int block) {
  return kernels::TokenPositions{plan.layout.block_start(block), plan.layout.block_stride()};
}

kernels::PositionMask kernel_mask(const Plan& plan, int q_block, int kv_block) {
  return kernel_mask(plan, block_positions(plan, q_block), block_positions(plan, kv_block));
}

kernels::PositionMask kernel_mask(const Plan& plan, kernels::TokenPositions q,
                                  kernels::TokenPositions kv) {
  const AttentionMask& m = plan.shape.mask;
  kernels::PositionMask mask{m.hides_future() ? kernels::MaskKind::causal : kernels::MaskKind::full,
                             q, kv};
  if (m.kind == AttentionMaskKind::sliding_window) mask.window = m.window_tokens;
  if (m.kind == AttentionMaskKind::documents) {
    mask.document_starts = m.document_starts.data();
    mask.document_count = static_cast<std::int64_t>(m.document_starts.size());
  }
  return mask;
}

}  // namespace tilesim::runtime
