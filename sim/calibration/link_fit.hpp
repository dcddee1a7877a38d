// Fits one link class's costs from point-to-point timings.
//
// Model (the simulator's, sim/model/simulator.hpp): a message of B bytes alone on a route
// takes t(B) = alpha + B / beta, alpha the per-message latency (s) and beta the achievable
// bandwidth of one flow (bytes/s). Least squares on (B, t) with relative weights gives
// intercept = alpha (clamped at 0) and slope = 1 / beta. The profile stores beta as the
// per-flow cap, and efficiency = beta / spec bandwidth (clamped into (0, 1]) when a spec is
// given, so that a lone flow runs at beta either way.
#pragma once

#include <string>
#include <vector>

#include "sim/calibration/linear_fit.hpp"

namespace tilesim::calibration {

struct MessageTiming {
  double bytes = 0.0;
  double seconds = 0.0;
};

struct LinkFit {
  double alpha_s = 0.0;
  double beta_bytes_per_s = 0.0;
  LineFit line;  // x = bytes, y = seconds
};

// Throws std::invalid_argument with fewer than two sizes or a non-positive slope.
LinkFit fit_link(const std::vector<MessageTiming>& timings);

}  // namespace tilesim::calibration
