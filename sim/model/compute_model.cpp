#include "sim/model/compute_model.hpp"

#include <cmath>

namespace tilesim {

double ComputeModel::block_time_s(double q_tokens, double kv_tokens, double pairs, double flops,
                                  Pass pass) const {
  const double size = std::sqrt(q_tokens * kv_tokens);
  double e = profile_->efficiency(pass, plan_->shape.head_dim, size);
  if (pairs < q_tokens * kv_tokens) e *= profile_->causal_efficiency;
  return flops / (profile_->peak_flops * e) + profile_->launch_overhead_s;
}

Picoseconds ComputeModel::duration_ps(const RankProgram& program, int index) const {
  const Op& op = program.op(index);
  if (op.kind == OpKind::compute) {
    const auto q_tokens =
        static_cast<double>(plan_->chunks[static_cast<std::size_t>(op.q_chunk)].tokens);
    const auto kv_tokens =
        static_cast<double>(plan_->chunks[static_cast<std::size_t>(op.kv_chunk)].tokens);
    const double pairs = plan_->unmasked_pairs(op.q_chunk, op.kv_chunk);
    return s_to_ps(block_time_s(q_tokens, kv_tokens, pairs, plan_->compute_flops(op), op.pass));
  }
  if (op.kind == OpKind::merge) {
    double bytes = 0.0;
    for (int obj : program.reads(index)) bytes += plan_->object(obj).bytes;
    for (int obj : program.writes(index)) bytes += 2.0 * plan_->object(obj).bytes;
    return s_to_ps(bytes / profile_->merge_bytes_per_s + profile_->launch_overhead_s);
  }
  return 0;
}

double ComputeModel::single_gpu_time_s() const {
  const auto s = static_cast<double>(plan_->shape.seq_len);
  const double pairs = plan_->shape.causal ? s * (s + 1) / 2 : s * s;
  double total = 0.0;
  if (plan_->shape.has_forward()) {
    total += block_time_s(s, s, pairs, pairs * plan_->shape.flops_per_pair_forward(), Pass::fwd);
  }
  if (plan_->shape.has_backward()) {
    total += block_time_s(s, s, pairs, pairs * plan_->shape.flops_per_pair_backward(), Pass::bwd);
  }
  return total;
}

}  // namespace tilesim
