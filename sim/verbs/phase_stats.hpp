// Per-phase figures of a simulated run (the ring report of `sweep`).
// A phase is one step of the schedule: one compute per rank overlapped with one transfer per
// rank; phases = the most comm groups any rank ran + 1. Every figure is a mean over the
// simulated ops, read off the per-rank totals the simulator streams (RankTotals), so that a
// symmetric, role-quotient or lazy run gives them without op records: a quotient's totals are
// its classes' repeated P / K times, which leaves every mean as the full run's.
#pragma once

#include <cstdint>

#include "sim/model/simulation_result.hpp"

namespace tilesim {

struct PhaseStats {
  int phases = 0;
  std::int64_t tokens_per_gpu = 0;
  double flops_per_gpu_per_phase = 0.0;  // mean FLOPs of one attention call
  double bytes_per_gpu_per_phase = 0.0;  // mean bytes of one transfer
  double bytes_per_phase_total = 0.0;    // all ranks' transfers of one phase
  double comm_s_per_phase = 0.0;         // slowest transfer, posted to arrived: the
                                         // ring advances at the pace of its slowest link
  double comm_s_per_phase_mean = 0.0;    // mean transfer time
  double compute_s_per_phase = 0.0;      // mean attention call time
};

// result.ranks holds every rank of the group (seq_len / their count tokens each).
PhaseStats phase_stats(const SimulationResult& result, std::int64_t seq_len);

}  // namespace tilesim
