#include "sim/model/compute_model.hpp"

#include <cmath>

namespace tilesim {

double ComputeModel::pair_time_s(Pass pass, ChunkPair pair) const {
  const Chunk& q = plan_->chunks[static_cast<std::size_t>(pair.q_chunk)];
  const Chunk& kv = plan_->chunks[static_cast<std::size_t>(pair.kv_chunk)];
  const double size = std::sqrt(static_cast<double>(q.tokens) * static_cast<double>(kv.tokens));
  const double e = profile_->efficiency(pass, plan_->shape.head_dim, size);
  const double per_pair = (pass == Pass::fwd ? plan_->shape.flops_per_pair_forward()
                                             : plan_->shape.flops_per_pair_backward()) /
                          static_cast<double>(plan_->head_groups);
  const auto block = static_cast<double>(plan_->layout.block_tokens());
  const double cut_e = e * profile_->causal_efficiency.at(block);
  double time_s = 0.0;
  for (int qb : q.blocks) {
    for (int kb : kv.blocks) {
      const double pairs = plan_->layout.unmasked_pairs(qb, kb, plan_->shape.causal);
      if (pairs <= 0) continue;
      time_s += pairs * per_pair / (profile_->peak_flops * (pairs < block * block ? cut_e : e));
    }
  }
  return time_s;
}

double ComputeModel::compute_time_s(const RankProgram& program, int index) const {
  const Pass pass = program.op(index).pass;
  double time_s = 0.0;
  for (ChunkPair pair : program.pairs(index)) time_s += pair_time_s(pass, pair);
  return time_s + profile_->launch_overhead_s;
}

Picoseconds ComputeModel::duration_ps(const RankProgram& program, int index) const {
  const Op& op = program.op(index);
  if (op.kind == OpKind::compute) return s_to_ps(compute_time_s(program, index));
  if (op.kind == OpKind::merge) {
    double bytes = 0.0;
    for (int obj : program.reads(index)) bytes += plan_->object(obj).bytes;
    for (int obj : program.writes(index)) bytes += 2.0 * plan_->object(obj).bytes;
    return s_to_ps(bytes / profile_->merge_bytes_per_s + profile_->launch_overhead_s);
  }
  return 0;
}

double ComputeModel::single_gpu_time_s() const {
  // The whole sequence as one block per pass: one causal block when causal.
  const auto s = static_cast<double>(plan_->shape.seq_len);
  const double pairs = plan_->shape.causal ? s * (s + 1) / 2 : s * s;
  double total = 0.0;
  for (Pass pass : {Pass::fwd, Pass::bwd}) {
    if (pass == Pass::fwd ? !plan_->shape.has_forward() : !plan_->shape.has_backward()) continue;
    double e = profile_->efficiency(pass, plan_->shape.head_dim, s);
    if (plan_->shape.causal) e *= profile_->causal_efficiency.at(s);
    const double per_pair = pass == Pass::fwd ? plan_->shape.flops_per_pair_forward()
                                              : plan_->shape.flops_per_pair_backward();
    total += pairs * per_pair / (profile_->peak_flops * e) + profile_->launch_overhead_s;
  }
  return total;
}

}  // namespace tilesim
