#include "sim/calibration/linear_fit.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tilesim::calibration {

double LineFit::max_abs_relative_residual() const {
  double worst = 0.0;
  for (double r : relative_residuals) worst = std::max(worst, std::abs(r));
  return worst;
}

LineFit fit_line(const std::vector<Sample>& samples, FitWeights weights) {
  double w_sum = 0.0, mx = 0.0, my = 0.0;
  std::vector<double> w(samples.size(), 1.0);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (weights == FitWeights::relative) {
      if (samples[i].y == 0.0)
        throw std::invalid_argument("fit_line: relative weights need y != 0");
      w[i] = 1.0 / (samples[i].y * samples[i].y);
    }
    w_sum += w[i];
    mx += w[i] * samples[i].x;
    my += w[i] * samples[i].y;
  }
  if (samples.size() < 2 || w_sum <= 0.0) {
    throw std::invalid_argument("fit_line: at least two samples are needed");
  }
  mx /= w_sum;
  my /= w_sum;
  double sxx = 0.0, sxy = 0.0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const double dx = samples[i].x - mx;
    sxx += w[i] * dx * dx;
    sxy += w[i] * dx * (samples[i].y - my);
  }
  if (sxx <= 0.0) throw std::invalid_argument("fit_line: x values must not all be equal");
  LineFit fit;
  fit.slope = sxy / sxx;
  fit.intercept = my - fit.slope * mx;
  for (const Sample& s : samples) {
    const double r = s.y - fit.at(s.x);
    fit.residuals.push_back(r);
    fit.relative_residuals.push_back(s.y != 0.0 ? r / s.y : 0.0);
  }
  return fit;
}

}  // namespace tilesim::calibration
