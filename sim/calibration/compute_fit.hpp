// Fits the compute part of a calibration profile from block-kernel timings.
//
// Model (sim/model/calibration_profile.hpp): a block of n x n tokens with F FLOPs takes
//   t = launch + F / (peak * e(pass, head_dim, n))           (full mask)
//   t = launch + F / (peak * e(pass, head_dim, n) * c(n))    (causal diagonal block,
//                                                             F counts unmasked pairs only)
// Given launch (measured on a tiny block), the rate of a sample is r = F / (t - launch);
// peak = the highest full-mask rate seen, forward or backward (so every efficiency is <= 1), e =
// r_full / peak at each measured n, and c(n) = r_causal(n) / r_full(n) (forward, first head_dim).
// Every sample is then predicted back through the fitted curves (linear in log2 n between knots, as
// the simulator interpolates) and its relative residual reported.
#pragma once

#include <map>
#include <vector>

#include "sim/model/calibration_profile.hpp"

namespace tilesim::calibration {

struct BlockTiming {
  Pass pass = Pass::fwd;
  int head_dim = 0;
  double tokens = 0.0;  // n: the block is n x n
  bool causal = false;  // diagonal block with the causal mask
  double flops = 0.0;   // of the unmasked pairs
  double seconds = 0.0;
};

struct ComputeFit {
  double peak_flops = 0.0;
  double launch_overhead_s = 0.0;
  std::map<int, EfficiencyCurve> forward;
  std::map<int, EfficiencyCurve> backward;
  EfficiencyCurve causal_efficiency;
  std::vector<double> relative_residuals;  // per timing, (measured - model) / measured
};

// Throws std::invalid_argument without a full forward timing, or a timing not longer
// than the launch overhead.
ComputeFit fit_compute(const std::vector<BlockTiming>& timings, double launch_overhead_s);

// The model time of one timing's block under a fit (the inverse of the fit).
double model_seconds(const ComputeFit& fit, const BlockTiming& block);

}  // namespace tilesim::calibration
