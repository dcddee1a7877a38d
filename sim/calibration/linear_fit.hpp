// Ordinary least squares for a straight line y = intercept + slope * x.
//
// With n samples (x_i, y_i), means mx, my:
//   slope = sum (x_i - mx)(y_i - my) / sum (x_i - mx)^2,  intercept = my - slope * mx.
// Residuals r_i = y_i - (intercept + slope x_i); the relative residual is r_i / y_i (the
// calibration reports it because times span orders of magnitude). Samples may be weighted:
// minimising sum w_i r_i^2 with w_i = 1 / y_i^2 fits relative error, so small messages count
// as much as large ones.
#pragma once

#include <vector>

namespace tilesim::calibration {

struct Sample {
  double x = 0.0;
  double y = 0.0;
};

struct LineFit {
  double intercept = 0.0;
  double slope = 0.0;
  std::vector<double> residuals;           // y_i - fitted_i, per sample
  std::vector<double> relative_residuals;  // (y_i - fitted_i) / y_i
  double at(double x) const { return intercept + slope * x; }
  double max_abs_relative_residual() const;
};

enum class FitWeights { uniform, relative };

// Throws std::invalid_argument with fewer than two distinct x values.
LineFit fit_line(const std::vector<Sample>& samples, FitWeights weights = FitWeights::uniform);

// Theil-Sen: slope = the median of the slopes between every two samples with different x,
// intercept = the median of y_i - slope * x_i. Up to ~29% of the samples can be arbitrarily
// wrong without moving the line (timings on a shared host: a descheduled op is an outlier,
// not noise). Throws std::invalid_argument with fewer than two distinct x values.
LineFit fit_line_robust(const std::vector<Sample>& samples);

// A line through the origin, y = slope * x, fitted robustly: slope = the median of y_i / x_i
// over the samples with x_i > 0 (intercept 0). Used where the intercept is known from
// elsewhere and the samples cannot pin it (see run_fit.hpp); up to half of the ratios can be
// arbitrarily wrong without moving the slope past the good ones. Throws std::invalid_argument
// without a sample with x > 0.
LineFit fit_scale_robust(const std::vector<Sample>& samples);

// The median of the values (the mean of the middle two for an even count); throws
// std::invalid_argument when empty.
double median(std::vector<double> values);

}  // namespace tilesim::calibration
