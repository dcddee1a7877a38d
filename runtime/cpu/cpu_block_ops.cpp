#include "runtime/cpu/cpu_block_ops.hpp"

#include <stdexcept>
#include <string>

#include "kernels/cpu/attention_cpu.hpp"
#include "runtime/executor/object_layout.hpp"

namespace tilesim::runtime {
namespace {

// Block `index` of an object whose blocks hold `size` elements each.
template <typename T>
std::span<T> block_of(std::span<T> all, std::size_t index, std::int64_t size) {
  const auto n = static_cast<std::size_t>(size);
  if ((index + 1) * n > all.size()) {
    throw std::invalid_argument("compute: an object is smaller than its chunk (" +
                                std::to_string(all.size()) + " values)");
  }
  return all.subspan(index * n, n);
}

const std::vector<int>& blocks_of(const Plan& plan, int chunk) {
  return plan.chunks.at(static_cast<std::size_t>(chunk)).blocks;
}

// Calls visit(a, b) for every pair of block indices of the two chunks that is not skipped.
template <typename Visit>
void for_each_pair(const Plan& plan, int q_chunk, int kv_chunk, Visit visit) {
  const std::vector<int>& q_blocks = blocks_of(plan, q_chunk);
  const std::vector<int>& kv_blocks = blocks_of(plan, kv_chunk);
  for (std::size_t a = 0; a < q_blocks.size(); ++a) {
    for (std::size_t b = 0; b < kv_blocks.size(); ++b) {
      if (plan.layout.mask(q_blocks[a], kv_blocks[b], plan.shape.mask) == BlockPairMask::skip) {
        continue;
      }
      visit(a, b, kernel_mask(plan, q_blocks[a], kv_blocks[b]));
    }
  }
}

}  // namespace

ForwardScratch::ForwardScratch(const Plan& plan)
    : o(static_cast<std::size_t>(block_rows(plan).o_elements())),
      lse(static_cast<std::size_t>(block_rows(plan).lse_elements())) {}

void run_forward_blocks(const Plan& plan, int q_chunk, int kv_chunk, const ForwardSpans& spans,
                        ForwardScratch& scratch, int threads) {
  const kernels::BlockShape shape = block_shape(plan);
  const kernels::RowsShape rows = block_rows(plan);
  const std::int64_t q_size = block_elements(plan, Tensor::q);
  const std::int64_t o_size = block_elements(plan, Tensor::o);
  const std::int64_t kv_size = block_elements(plan, Tensor::kv);
  const auto k_size = static_cast<std::size_t>(shape.k_elements());
  const std::int64_t lse_size = block_elements(plan, Tensor::lse);
  for_each_pair(
      plan, q_chunk, kv_chunk, [&](std::size_t a, std::size_t b, kernels::PositionMask m) {
        const std::span<const float> kv = block_of(spans.kv, b, kv_size);
        kernels::attention_forward_cpu(shape, m, block_of(spans.q, a, q_size), kv.first(k_size),
                                       kv.subspan(k_size), scratch.o, scratch.lse, threads);
        kernels::accumulate_partial_cpu(rows, scratch.o, scratch.lse, block_of(spans.o, a, o_size),
                                        block_of(spans.lse, a, lse_size));
      });
}

void run_backward_blocks(const Plan& plan, int q_chunk, int kv_chunk, const BackwardSpans& spans,
                         int threads) {
  const kernels::BlockShape shape = block_shape(plan);
  const std::int64_t q_size = block_elements(plan, Tensor::q);
  const std::int64_t o_size = block_elements(plan, Tensor::o);
  const std::int64_t kv_size = block_elements(plan, Tensor::kv);
  const auto k_size = static_cast<std::size_t>(shape.k_elements());
  const std::int64_t lse_size = block_elements(plan, Tensor::lse);
  for_each_pair(plan, q_chunk, kv_chunk,
                [&](std::size_t a, std::size_t b, kernels::PositionMask m) {
                  const std::span<const float> kv = block_of(spans.kv, b, kv_size);
                  const std::span<float> dkv = block_of(spans.dkv, b, kv_size);
                  kernels::attention_backward_cpu(
                      shape, m, block_of(spans.q, a, q_size), kv.first(k_size), kv.subspan(k_size),
                      block_of(spans.o, a, o_size), block_of(spans.d_o, a, o_size),
                      block_of(spans.lse, a, lse_size), block_of(spans.dq, a, q_size),
                      dkv.first(k_size), dkv.subspan(k_size), threads);
                });
}

}  // namespace tilesim::runtime
