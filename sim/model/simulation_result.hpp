// What one simulation (or one measured run) produced: per-op times, per-rank
// totals and the headline figures of the result JSON (docs/architecture.md "Contracts").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/plan_tracker.hpp"

namespace tilesim {

struct OpTiming {
  Picoseconds start_ps = -1;  // -1: never ran (free ops are instantaneous)
  Picoseconds end_ps = -1;
};

struct TransferRecord {
  OpId send;
  OpId recv;
  int object = -1;
  double bytes = 0.0;
  Picoseconds posted_ps = 0;  // both sides posted
  Picoseconds end_ps = 0;     // last byte arrived
};

struct RankTotals {
  Picoseconds end_ps = 0;           // last op of the rank finished
  Picoseconds compute_busy_ps = 0;  // sum of compute and merge durations
  Picoseconds comm_active_ps = 0;   // union of intervals with a transfer in flight
  Picoseconds exposed_comm_ps = 0;  // compute stream idle waiting on transfers (exposed_comm.hpp)
  double compute_flops = 0.0;
  double bytes_sent = 0.0;
  double bytes_received = 0.0;
  double peak_bytes = 0.0;
  TensorBytes peak_breakdown{};
  // Streamed for per-phase means without op records (sweep, phase_stats.hpp); simulated runs
  // only. Attention calls are the compute ops, not the merges.
  std::int64_t attention_calls = 0;
  Picoseconds attention_busy_ps = 0;
  int comm_groups = 0;  // comm groups this rank ran a transfer of
  std::int64_t transfers_received = 0;
  Picoseconds transfer_time_ps = 0;     // their posted-to-arrived times, summed
  Picoseconds slowest_transfer_ps = 0;  // and the longest
};

struct LinkSample {
  Picoseconds time_ps = 0;
  int link = 0;
  double load_bytes_per_s = 0.0;
};

struct SimulationResult {
  Picoseconds makespan_ps = 0;
  double single_gpu_s = 0.0;
  // The ranks that share single_gpu_s's work, over which the parallel efficiency divides the
  // speedup: 0 = every rank of the result; a job's CP group size (each group does its own
  // attention, so its speedup is over its own GPUs, not the job's).
  int speedup_ranks = 0;
  std::vector<RankTotals> ranks;
  // Where `ranks` are a work-block quotient's (each rank its representative's totals) but the
  // ranks' FLOPs were counted apart (WorkApproximation::end_rank_flops): max over mean of those
  // FLOPs, which summarize reports instead of the representatives'. Else empty.
  std::optional<double> counted_compute_balance;
  std::vector<std::vector<OpTiming>> ops;  // [rank][op index]
  std::vector<TransferRecord> transfers;
  // Only when asked for (SimulationOptions::record_route_busy): for each (source GPU,
  // destination GPU) the summed picoseconds from post to last byte of its transfers. The
  // terms are whole picoseconds, so the sum is exact below 2^53 ps (2.5 h) in any order.
  std::map<std::pair<int, int>, double> route_busy_ps;
  std::vector<LinkSample> link_samples;  // only when asked for (traces)
  std::vector<std::string> warnings;     // profile lookups past a table end, one per end
  std::uint64_t events = 0;
  double sim_wall_s = 0.0;
  // A run stopped by SimulationOptions::stop_after_ps: the time of the first event not
  // handled, a lower bound on the makespan (-1: ran to the end). The other fields are partial.
  Picoseconds stopped_at_ps = -1;
};

// The headline figures of the result JSON, derived from a result.
struct Figures {
  double makespan_s = 0.0;
  double single_gpu_s = 0.0;
  double speedup = 0.0;
  double efficiency = 0.0;
  double compute_s_max = 0.0;
  double exposed_comm_s_max = 0.0;
  double overlap = 0.0;          // share of communication time hidden behind compute
  double compute_balance = 0.0;  // max / mean FLOPs per rank
  double comm_bytes_total = 0.0;
  double comm_bytes_per_rank_max = 0.0;  // bytes received
  double peak_memory_bytes_max = 0.0;
};

Figures summarize(const SimulationResult& result);

}  // namespace tilesim
