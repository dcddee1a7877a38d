// Refits a profile from runs through the runtime itself: the executor's measured op timeline,
// not a microbenchmark loop, sets the level of compute and communication costs.
//
// Why: a kernel timed in a tight loop (hot caches, nothing else on the core) runs 5-20% faster
// than the same kernel as a compute op of a real run (fresh buffers, the progress loop and MPI
// copies beside it), and a message timed by ping-pong completes far sooner than one that only
// progresses when the executor polls. The microbenchmarks keep the shape (efficiency by block
// size, the causal curve) and the launch overhead; the runs fix the level.
//
// The timeline of a run must be on one clock for all its ranks (shift_to_one_clock): each
// rank's executor starts its own clock when it leaves the barrier, and on a host with more
// ranks than cores they leave it milliseconds apart (0-18 ms measured with 4 ranks on 2
// cores), as long as an in-run transfer.
//
// Compute: for every compute op, kernel = its kernel time under the profile (ComputeModel
// without the launch overhead) and s = the stretch the simulator gives it (ComputeStretch)
// on the measured timeline: the mean over the op of max(1, k(t) / cores), k(t) the
// compute-stream ops (computes and merges) of all the run's ranks running at t (one host),
// s = 1 without `cores`. The simulator's op lasts s x (launch + scale x kernel), so each op
// gives the sample x = s x kernel, y = measured - s x launch, and scale = the median of y / x
// (fit_scale_robust: an op descheduled by the host is an outlier, not noise). peak_flops /
// scale is the fitted peak. The launch overhead stays the microbenchmark's (an empty task's
// round trip through a ComputeWorker, tens of us): the probe ops last 5 ms and more, so a
// fitted intercept is set by their noise, not by the overhead (a free Theil-Sen intercept
// came out 0 to 1.1 ms over eleven calibrations of one quiet host and 11.9 ms in another,
// and the simulator pays it, stretched, on every op).
// Transfers: for every matched send/recv pair, y = recv completion - the later of the two
// posts. In a run a message moves only when the executor polls, so y is mostly the poll
// cadence and barely grows with size: the link keeps its ping-pong bandwidth and its alpha
// becomes the median of y - bytes / flow_cap (never below the ping-pong alpha).
#pragma once

#include <cstddef>
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

// Puts a run's ranks on one clock: rank r's timings ops[r] are relative to its own start,
// which was clock_start[r] on a clock all ranks share (e.g. one host's steady clock);
// afterwards they are relative to the earliest start. Ops that never ran (-1) stay so.
void shift_to_one_clock(std::vector<std::vector<OpTiming>>& ops,
                        const std::vector<Picoseconds>& clock_start);

// The mean of max(1, k(t) / cores) over op `index` of `rank` (a compute or merge), k(t) the
// compute-stream ops of all ranks running at t, this one included; 1 when cores <= 0.
double measured_stretch(const MeasuredRun& run, int rank, int index, double cores);

struct ComputeSample {
  std::size_t run = 0;  // index into the fitted runs
  int rank = 0;
  int op = 0;
  double kernel_s = 0.0;  // model kernel time, launch overhead excluded
  double stretch = 1.0;   // measured_stretch
  double seconds = 0.0;   // measured duration
};

// The fit's point of one compute op: x = stretch x kernel, y = measured - stretch x launch
// (the op's scale is y / x).
Sample compute_point(const ComputeSample& sample, double launch_overhead_s);

struct RunFit {
  // x = stretch x kernel, y = measured - stretch x launch, per compute op (in
  // compute_samples' order); slope = scale, intercept 0.
  LineFit compute;
  std::vector<ComputeSample> compute_samples;
  bool has_transfers = false;
  double transfer_alpha_s = 0.0;         // median excess over bytes / flow_cap
  std::vector<Sample> transfer_samples;  // x = bytes, y = seconds
};

// `link` is the class the runs' ranks talk over (its flow cap prices the bytes). Throws
// std::invalid_argument when the runs hold no timed compute op or the fitted compute scale is
// not positive.
RunFit fit_runs(const std::vector<MeasuredRun>& runs, const CalibrationProfile& profile,
                LinkClass link);

// The profile with the run fit applied: peak_flops / scale and (with transfers) the alpha of
// `link`; the launch overhead is kept.
CalibrationProfile apply_run_fit(CalibrationProfile profile, const RunFit& fit, LinkClass link);

}  // namespace tilesim::calibration
