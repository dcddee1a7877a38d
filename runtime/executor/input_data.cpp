#include "runtime/executor/input_data.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/reference_outputs.hpp"

namespace tilesim::runtime {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

float round_to(InputPrecision precision, float value) {
  if (precision == InputPrecision::fp32) return value;
  auto bits = std::bit_cast<std::uint32_t>(value);
  bits += 0x7fffU + ((bits >> 16) & 1U);  // round to nearest even (inputs are finite)
  return std::bit_cast<float>(bits & 0xffff0000U);
}

InputData::InputData(const Plan& plan, std::uint64_t seed, InputPrecision precision)
    : plan_(&plan), seed_(seed), precision_(precision) {}

float InputData::value(Tensor tensor, int part, std::int64_t batch, std::int64_t position,
                       std::int64_t head, std::int64_t dim) const {
  const AttentionShape& s = plan_->shape;
  auto index = static_cast<std::uint64_t>(static_cast<int>(tensor) * 2 + part);
  index = index * static_cast<std::uint64_t>(s.batch) + static_cast<std::uint64_t>(batch);
  index = index * static_cast<std::uint64_t>(s.seq_len) + static_cast<std::uint64_t>(position);
  index = index * static_cast<std::uint64_t>(s.heads) + static_cast<std::uint64_t>(head);
  // The wider of the two head dims strides the index, so every element has its own value and
  // plans with v_head_dim = head_dim keep the values they had before v_head_dim existed.
  const auto dim_stride = static_cast<std::uint64_t>(std::max(s.head_dim, s.value_dim()));
  index = index * dim_stride + static_cast<std::uint64_t>(dim);
  const std::uint64_t h = splitmix64(splitmix64(seed_) ^ index);
  // 24 random bits -> [-1, 1), exactly representable in fp32.
  const float unit = static_cast<float>(h >> 40) * (1.0F / 16777216.0F);
  return round_to(precision_, 2.0F * unit - 1.0F);
}

std::int64_t InputData::head_dim_of(Tensor tensor, int part) const {
  const AttentionShape& s = plan_->shape;
  const bool v_side =
      tensor == Tensor::d_o || tensor == Tensor::o || (tensor == Tensor::kv && part == 1);
  return v_side ? s.value_dim() : s.head_dim;
}

void InputData::fill_tokens(Tensor tensor, int part, std::int64_t head_begin, std::int64_t heads,
                            std::int64_t start, std::int64_t stride, std::int64_t tokens,
                            std::span<float> out) const {
  const AttentionShape& s = plan_->shape;
  const std::int64_t dims = head_dim_of(tensor, part);
  std::size_t i = 0;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t t = 0; t < tokens; ++t) {
      for (std::int64_t h = head_begin; h < head_begin + heads; ++h) {
        for (std::int64_t d = 0; d < dims; ++d) {
          out[i++] = value(tensor, part, b, start + t * stride, h, d);
        }
      }
    }
  }
}

void InputData::fill(int object, std::span<float> out) const {
  const DataObject& obj = plan_->object(object);
  const Chunk& chunk = plan_->chunks.at(static_cast<std::size_t>(obj.chunk));
  const ObjectExtent extent = object_extent(*plan_, object);
  if (out.size() != static_cast<std::size_t>(extent.elements())) {
    throw std::invalid_argument("InputData::fill: buffer size does not match " + obj.name);
  }
  if (obj.tensor == Tensor::o || obj.tensor == Tensor::lse) {
    ReferenceOutputs reference(*plan_, *this);
    const std::vector<double> values = reference.object_values(object);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(values[i]);
    return;
  }
  const HeadRange heads = head_range(*plan_, obj.chunk);
  const std::int64_t c = plan_->layout.block_tokens();
  const auto block_size = static_cast<std::size_t>(extent.block_elements);
  for (std::size_t k = 0; k < chunk.blocks.size(); ++k) {
    const kernels::TokenPositions pos = block_positions(*plan_, chunk.blocks[k]);
    std::span<float> block = out.subspan(k * block_size, block_size);
    switch (obj.tensor) {
      case Tensor::q:
      case Tensor::d_o:
        fill_tokens(obj.tensor, 0, heads.q_begin, heads.q_count, pos.start, pos.stride, c, block);
        break;
      case Tensor::kv: {
        const auto k_size = static_cast<std::size_t>(plan_->shape.batch * c * heads.kv_count *
                                                     head_dim_of(Tensor::kv, 0));
        fill_tokens(Tensor::kv, 0, heads.kv_begin, heads.kv_count, pos.start, pos.stride, c,
                    block.first(k_size));
        fill_tokens(Tensor::kv, 1, heads.kv_begin, heads.kv_count, pos.start, pos.stride, c,
                    block.subspan(k_size));
        break;
      }
      default:
        throw std::invalid_argument("InputData::fill: " + obj.name +
                                    " is not a generated input (Q, KV, dO, saved O, LSE)");
    }
  }
  if (object == poisoned_object_ && !out.empty()) out[0] = std::numeric_limits<float>::quiet_NaN();
}

std::vector<double> InputData::q_block(Tensor tensor, int block) const {
  const kernels::TokenPositions pos = block_positions(*plan_, block);
  const AttentionShape& s = plan_->shape;
  const std::int64_t c = plan_->layout.block_tokens();
  std::vector<float> values(
      static_cast<std::size_t>(s.batch * c * s.heads * head_dim_of(tensor, 0)));
  fill_tokens(tensor, 0, 0, s.heads, pos.start, pos.stride, c, values);
  return {values.begin(), values.end()};
}

std::vector<double> InputData::full_kv(int part) const {
  const AttentionShape& s = plan_->shape;
  std::vector<float> values(
      static_cast<std::size_t>(s.batch * s.seq_len * s.kv_heads * head_dim_of(Tensor::kv, part)));
  fill_tokens(Tensor::kv, part, 0, s.kv_heads, 0, 1, s.seq_len, values);
  return {values.begin(), values.end()};
}

}  // namespace tilesim::runtime
