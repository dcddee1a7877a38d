// Per-phase figures of a simulated run (the ring report of `sweep`).
// A phase is one step of the schedule: one compute per rank overlapped with
// one transfer per rank; phases = comm groups per rank + 1. Every figure is a
// mean over the simulated ops, not a closed form.
#pragma once

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

struct PhaseStats {
  int phases = 0;
  std::int64_t tokens_per_gpu = 0;
  double flops_per_gpu_per_phase = 0.0;  // mean FLOPs of one compute op
  double bytes_per_gpu_per_phase = 0.0;  // mean bytes of one transfer
  double bytes_per_phase_total = 0.0;    // all ranks' transfers of one phase
  double comm_s_per_phase = 0.0;         // slowest transfer, posted to arrived: the
                                         // ring advances at the pace of its slowest link
  double comm_s_per_phase_mean = 0.0;    // mean transfer time
  double compute_s_per_phase = 0.0;      // mean compute op time
};

PhaseStats phase_stats(const Plan& plan, const SimulationResult& result);

}  // namespace tilesim
