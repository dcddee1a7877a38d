// Refits a profile from runs through the runtime itself: the executor's measured op timeline,
// not a microbenchmark loop, sets the level of compute and communication costs.
//
// Why: a kernel timed in a tight loop (hot caches, nothing else on the core) runs 5-20% faster
// than the same kernel as a compute op of a real run (fresh buffers, the progress loop and MPI
// copies beside it), and a message timed by ping-pong completes far sooner than one that only
// progresses when the executor polls. The microbenchmarks keep the shape (efficiency by block
// size, the causal curve); the runs fix the level.
//
// Compute: for every compute op, x = its kernel time under the profile (ComputeModel without
// the launch overhead; times ranks / cores when more ranks than cores share the host) and
// y = its measured duration. A robust straight line y = overhead + scale * x (Theil-Sen: an op
// descheduled by the host is an outlier, not noise) gives peak_flops / scale and
// launch_overhead = overhead (>= 0).
// Transfers: for every matched send/recv pair, y = recv completion - the later of the two
// posts. In a run a message moves only when the executor polls, so y is mostly the poll
// cadence and barely grows with size: the link keeps its ping-pong bandwidth and its alpha
// becomes the median of y - bytes / flow_cap (never below the ping-pong alpha).
#pragma once

#include <vector>

#include "sim/calibration/linear_fit.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::calibration {

struct MeasuredRun {
  Plan plan;
  std::vector<std::vector<OpTiming>> ops;  // [rank][op index], relative to one clock
};

struct RunFit {
  LineFit compute;  // y = measured op seconds, x = model kernel seconds
  bool has_transfers = false;
  double transfer_alpha_s = 0.0;         // median excess over bytes / flow_cap
  std::vector<Sample> transfer_samples;  // x = bytes, y = seconds
};

// `link` is the class the runs' ranks talk over (its flow cap prices the bytes). Throws
// std::invalid_argument when the runs hold fewer than two distinct compute sizes or the
// fitted compute scale is not positive.
RunFit fit_runs(const std::vector<MeasuredRun>& runs, const CalibrationProfile& profile,
                LinkClass link);

// The profile with the run fit applied: peak_flops / scale, launch overhead, and (with
// transfers) the alpha of `link`.
CalibrationProfile apply_run_fit(CalibrationProfile profile, const RunFit& fit, LinkClass link);

}  // namespace tilesim::calibration
