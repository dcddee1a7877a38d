#include "runtime/numerics_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "kernels/cpu/reference_attention.hpp"
#include "runtime/object_layout.hpp"

namespace tilesim::runtime {
namespace {

void compare(std::span<const float> got, std::span<const double> want, CheckResult& result) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double g = got[i];
    const double w = want[i];
    result.values += 1;
    if (std::isinf(w) && g == w) continue;
    const double err = std::isfinite(g) ? std::abs(g - w) : INFINITY;
    result.max_abs_error = std::max(result.max_abs_error, err);
    result.max_abs_reference = std::max(result.max_abs_reference, std::abs(w));
  }
}

}  // namespace

void CheckResult::combine(const CheckResult& other) {
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  max_abs_reference = std::max(max_abs_reference, other.max_abs_reference);
  values += other.values;
}

CheckResult check_forward_chunk(const Plan& plan, const InputData& inputs, int chunk,
                                std::span<const float> o, std::span<const float> lse) {
  const Chunk& c = plan.chunks.at(static_cast<std::size_t>(chunk));
  const kernels::RowsShape rows = block_rows(plan);
  const auto o_size = static_cast<std::size_t>(rows.o_elements());
  const auto lse_size = static_cast<std::size_t>(rows.lse_elements());
  if (o.size() != o_size * c.blocks.size() || lse.size() != lse_size * c.blocks.size()) {
    throw std::invalid_argument("check_forward_chunk: output sizes do not match the chunk");
  }
  const std::vector<double> k = inputs.full_kv(0);
  const std::vector<double> v = inputs.full_kv(1);
  kernels::BlockShape shape = block_shape(plan);
  shape.kv_tokens = plan.shape.seq_len;
  CheckResult result;
  std::vector<double> ref_o(o_size);
  std::vector<double> ref_lse(lse_size);
  for (std::size_t b = 0; b < c.blocks.size(); ++b) {
    const std::vector<double> q = inputs.q_block(Tensor::q, c.blocks[b]);
    const kernels::BlockMask mask{
        plan.shape.causal ? kernels::MaskKind::causal : kernels::MaskKind::full,
        block_positions(plan, c.blocks[b]), kernels::TokenPositions{0, 1}};
    kernels::reference_forward(shape, mask, q, k, v, ref_o, ref_lse);
    compare(o.subspan(b * o_size, o_size), ref_o, result);
    compare(lse.subspan(b * lse_size, lse_size), ref_lse, result);
  }
  return result;
}

}  // namespace tilesim::runtime
