#include "sim/verbs/phase_stats.hpp"

#include <algorithm>

namespace tilesim {

PhaseStats phase_stats(const SimulationResult& result, std::int64_t seq_len) {
  PhaseStats s;
  if (result.ranks.empty()) return s;
  s.tokens_per_gpu = seq_len / static_cast<std::int64_t>(result.ranks.size());
  int max_groups = 0;
  double flops = 0.0, bytes = 0.0;
  std::int64_t calls = 0, transfers = 0;
  Picoseconds compute_ps = 0, transfer_ps = 0, slowest_ps = 0;
  for (const RankTotals& r : result.ranks) {
    max_groups = std::max(max_groups, r.comm_groups);
    flops += r.compute_flops;
    calls += r.attention_calls;
    compute_ps += r.attention_busy_ps;
    bytes += r.bytes_received;
    transfers += r.transfers_received;
    transfer_ps += r.transfer_time_ps;
    slowest_ps = std::max(slowest_ps, r.slowest_transfer_ps);
  }
  s.phases = max_groups + 1;
  if (calls > 0) {
    s.flops_per_gpu_per_phase = flops / static_cast<double>(calls);
    s.compute_s_per_phase = ps_to_s(compute_ps) / static_cast<double>(calls);
  }
  if (transfers > 0) {
    const auto n = static_cast<double>(transfers);
    s.bytes_per_gpu_per_phase = bytes / n;
    s.bytes_per_phase_total = bytes / std::max(1, s.phases - 1);
    s.comm_s_per_phase = ps_to_s(slowest_ps);
    s.comm_s_per_phase_mean = ps_to_s(transfer_ps) / n;
  }
  return s;
}

}  // namespace tilesim
