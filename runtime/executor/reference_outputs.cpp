#include "runtime/executor/reference_outputs.hpp"

#include <stdexcept>

#include "kernels/cpu/reference_attention.hpp"
#include "runtime/executor/object_layout.hpp"

namespace tilesim::runtime {
namespace {

// Appends heads [begin, begin + count) of a [outer][heads][inner] array to `out`.
void append_heads(std::span<const double> all, std::int64_t outer, std::int64_t heads,
                  std::int64_t inner, std::int64_t begin, std::int64_t count,
                  std::vector<double>& out) {
  for (std::int64_t x = 0; x < outer; ++x) {
    const auto from = static_cast<std::size_t>((x * heads + begin) * inner);
    const auto n = static_cast<std::size_t>(count * inner);
    out.insert(out.end(), all.begin() + static_cast<std::ptrdiff_t>(from),
               all.begin() + static_cast<std::ptrdiff_t>(from + n));
  }
}

// One (q tokens x kv tokens) block over all heads.
kernels::BlockShape full_heads(const Plan& plan, std::int64_t q_tokens, std::int64_t kv_tokens) {
  const AttentionShape& s = plan.shape;
  return kernels::BlockShape{s.batch,  s.heads,   s.kv_heads,   s.head_dim,
                             q_tokens, kv_tokens, s.value_dim()};
}

}  // namespace

ReferenceOutputs::ReferenceOutputs(const Plan& plan, const InputData& inputs)
    : plan_(plan), inputs_(inputs) {}

const std::vector<double>& ReferenceOutputs::full_kv(int part) {
  std::vector<double>& values = part == 0 ? k_ : v_;
  if (values.empty()) values = inputs_.full_kv(part);
  return values;
}

std::vector<double> ReferenceOutputs::kv_block(int part, int block) {
  const AttentionShape& s = plan_.shape;
  const std::vector<double>& all = full_kv(part);
  const kernels::TokenPositions pos = block_positions(plan_, block);
  const std::int64_t c = plan_.layout.block_tokens();
  const std::int64_t row = s.kv_heads * (part == 0 ? s.head_dim : s.value_dim());
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(s.batch * c * row));
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t t = 0; t < c; ++t) {
      const auto from = static_cast<std::ptrdiff_t>((b * s.seq_len + pos.at(t)) * row);
      out.insert(out.end(), all.begin() + from, all.begin() + from + row);
    }
  }
  return out;
}

const ReferenceRows& ReferenceOutputs::forward(int block) {
  if (auto it = forward_.find(block); it != forward_.end()) return it->second;
  const kernels::BlockShape shape =
      full_heads(plan_, plan_.layout.block_tokens(), plan_.shape.seq_len);
  ReferenceRows rows{std::vector<double>(static_cast<std::size_t>(shape.o_elements())),
                     std::vector<double>(static_cast<std::size_t>(shape.lse_elements()))};
  const kernels::PositionMask mask = kernel_mask(plan_, block_positions(plan_, block), {0, 1});
  kernels::reference_forward(shape, mask, inputs_.q_block(Tensor::q, block), full_kv(0), full_kv(1),
                             rows.o, rows.lse);
  return forward_.emplace(block, std::move(rows)).first->second;
}

const std::vector<double>& ReferenceOutputs::dq(int block) {
  if (auto it = dq_.find(block); it != dq_.end()) return it->second;
  const kernels::BlockShape shape =
      full_heads(plan_, plan_.layout.block_tokens(), plan_.shape.seq_len);
  const ReferenceRows& fwd = forward(block);
  std::vector<double> dq(static_cast<std::size_t>(shape.q_elements()), 0.0);
  std::vector<double> dk(static_cast<std::size_t>(shape.k_elements()), 0.0);
  std::vector<double> dv(static_cast<std::size_t>(shape.v_elements()), 0.0);
  const kernels::PositionMask mask = kernel_mask(plan_, block_positions(plan_, block), {0, 1});
  kernels::reference_backward(shape, mask, inputs_.q_block(Tensor::q, block), full_kv(0),
                              full_kv(1), fwd.o, inputs_.q_block(Tensor::d_o, block), fwd.lse, dq,
                              dk, dv);
  return dq_.emplace(block, std::move(dq)).first->second;
}

const std::vector<double>& ReferenceOutputs::dkv(int block) {
  if (auto it = dkv_.find(block); it != dkv_.end()) return it->second;
  const std::int64_t c = plan_.layout.block_tokens();
  const kernels::BlockShape shape = full_heads(plan_, c, c);
  const std::vector<double> k = kv_block(0, block);
  const std::vector<double> v = kv_block(1, block);
  std::vector<double> dq(static_cast<std::size_t>(shape.q_elements()));
  std::vector<double> dk(static_cast<std::size_t>(shape.k_elements()), 0.0);
  std::vector<double> dv(static_cast<std::size_t>(shape.v_elements()), 0.0);
  for (int q_block = 0; q_block < plan_.layout.blocks; ++q_block) {
    if (plan_.layout.mask(q_block, block, plan_.shape.mask) == BlockPairMask::skip) continue;
    const ReferenceRows& fwd = forward(q_block);
    const kernels::PositionMask mask = kernel_mask(plan_, q_block, block);
    kernels::reference_backward(shape, mask, inputs_.q_block(Tensor::q, q_block), k, v, fwd.o,
                                inputs_.q_block(Tensor::d_o, q_block), fwd.lse, dq, dk, dv);
  }
  dk.insert(dk.end(), dv.begin(), dv.end());
  return dkv_.emplace(block, std::move(dk)).first->second;
}

std::vector<double> ReferenceOutputs::object_values(int object) {
  const DataObject& obj = plan_.object(object);
  const Chunk& chunk = plan_.chunks.at(static_cast<std::size_t>(obj.chunk));
  const HeadRange heads = head_range(plan_, obj.chunk);
  const AttentionShape& s = plan_.shape;
  const std::int64_t c = plan_.layout.block_tokens();
  std::vector<double> out;
  for (int block : chunk.blocks) {
    switch (obj.tensor) {
      case Tensor::o:
        append_heads(forward(block).o, s.batch * c, s.heads, s.value_dim(), heads.q_begin,
                     heads.q_count, out);
        break;
      case Tensor::lse:
        append_heads(forward(block).lse, s.batch, s.heads, c, heads.q_begin, heads.q_count, out);
        break;
      case Tensor::dq:
        append_heads(dq(block), s.batch * c, s.heads, s.head_dim, heads.q_begin, heads.q_count,
                     out);
        break;
      case Tensor::dkv: {
        const std::span<const double> both = dkv(block);
        const auto k_size = static_cast<std::size_t>(s.batch * c * s.kv_heads * s.head_dim);
        append_heads(both.first(k_size), s.batch * c, s.kv_heads, s.head_dim, heads.kv_begin,
                     heads.kv_count, out);
        append_heads(both.subspan(k_size), s.batch * c, s.kv_heads, s.value_dim(), heads.kv_begin,
                     heads.kv_count, out);
        break;
      }
      default:
        throw std::invalid_argument("ReferenceOutputs: " + obj.name +
                                    " is not an output tensor (O, LSE, dQ, dKV)");
    }
  }
  return out;
}

}  // namespace tilesim::runtime
