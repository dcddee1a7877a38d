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
// y = its measured duration. A straight line y = overhead + scale * x (ordinary least squares)
// gives peak_flops / scale and launch_overhead = overhead (>= 0).
// Transfers: for every matched send/recv pair, x = bytes and y = recv completion - the later of
// the two posts; the line y = alpha + x / beta gives the link's alpha and flow cap (the class
// the runs' ranks talk over).
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
  LineFit transfer;
  bool has_transfers = false;  // false: too few sizes, or no growth with size (link kept)
  std::vector<Sample> transfer_samples;
};

// Throws std::invalid_argument when the runs hold fewer than two distinct compute sizes or
// the fitted compute scale is not positive.
RunFit fit_runs(const std::vector<MeasuredRun>& runs, const CalibrationProfile& profile);

// The profile with the run fit applied: peak_flops / scale, launch overhead, and (with
// transfers) the alpha and flow cap of `link`.
CalibrationProfile apply_run_fit(CalibrationProfile profile, const RunFit& fit, LinkClass link);

}  // namespace tilesim::calibration
