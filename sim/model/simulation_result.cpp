#include "sim/model/simulation_result.hpp"

#include <algorithm>

#include "sim/core/units.hpp"

namespace tilesim {

Figures summarize(const SimulationResult& result) {
  Figures f;
  f.makespan_s = ps_to_s(result.makespan_ps);
  f.single_gpu_s = result.single_gpu_s;
  const auto p =
      static_cast<double>(result.speedup_ranks > 0 ? result.speedup_ranks : result.ranks.size());
  f.speedup = f.makespan_s > 0 ? f.single_gpu_s / f.makespan_s : 0.0;
  f.efficiency = p > 0 ? f.speedup / p : 0.0;
  double exposed_sum = 0.0, active_sum = 0.0, flops_sum = 0.0, flops_max = 0.0;
  for (const RankTotals& r : result.ranks) {
    const double compute_s = ps_to_s(r.compute_busy_ps);
    const double exposed_s = ps_to_s(r.exposed_comm_ps);
    f.compute_s_max = std::max(f.compute_s_max, compute_s);
    f.exposed_comm_s_max = std::max(f.exposed_comm_s_max, exposed_s);
    exposed_sum += std::min(exposed_s, ps_to_s(r.comm_active_ps));
    active_sum += ps_to_s(r.comm_active_ps);
    flops_sum += r.compute_flops;
    flops_max = std::max(flops_max, r.compute_flops);
    f.comm_bytes_total += r.bytes_sent;
    f.comm_bytes_per_rank_max = std::max(f.comm_bytes_per_rank_max, r.bytes_received);
    f.peak_memory_bytes_max = std::max(f.peak_memory_bytes_max, r.peak_bytes);
  }
  f.overlap = active_sum > 0 ? std::clamp(1.0 - exposed_sum / active_sum, 0.0, 1.0) : 1.0;
  f.compute_balance = result.counted_compute_balance ? *result.counted_compute_balance
                      : flops_sum > 0                ? flops_max / (flops_sum / p)
                                                     : 1.0;
  return f;
}

}  // namespace tilesim
