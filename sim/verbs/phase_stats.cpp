#include "sim/verbs/phase_stats.hpp"

#include <algorithm>
#include <set>

namespace tilesim {

PhaseStats phase_stats(const Plan& plan, const SimulationResult& result) {
  PhaseStats s;
  s.tokens_per_gpu = plan.shape.seq_len / plan.ranks;
  int max_groups = 0;
  double flops = 0.0, compute_s = 0.0;
  std::int64_t computes = 0;
  for (int r = 0; r < plan.ranks; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    std::set<int> groups;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind == OpKind::send || op.kind == OpKind::recv) groups.insert(op.comm_group);
      if (op.kind != OpKind::compute) continue;
      const OpTiming& t = result.ops[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      flops += plan.compute_flops({r, i});
      compute_s += ps_to_s(t.end_ps - t.start_ps);
      ++computes;
    }
    max_groups = std::max(max_groups, static_cast<int>(groups.size()));
  }
  s.phases = max_groups + 1;
  if (computes > 0) {
    s.flops_per_gpu_per_phase = flops / static_cast<double>(computes);
    s.compute_s_per_phase = compute_s / static_cast<double>(computes);
  }
  if (!result.transfers.empty()) {
    double bytes = 0.0, comm_s = 0.0, slowest_s = 0.0;
    for (const TransferRecord& t : result.transfers) {
      bytes += t.bytes;
      comm_s += ps_to_s(t.end_ps - t.posted_ps);
      slowest_s = std::max(slowest_s, ps_to_s(t.end_ps - t.posted_ps));
    }
    const auto n = static_cast<double>(result.transfers.size());
    s.bytes_per_gpu_per_phase = bytes / n;
    s.bytes_per_phase_total = bytes / std::max(1, s.phases - 1);
    s.comm_s_per_phase = slowest_s;
    s.comm_s_per_phase_mean = comm_s / n;
  }
  return s;
}

}  // namespace tilesim
