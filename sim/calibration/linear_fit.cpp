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

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median: no values");
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

namespace {

void set_residuals(const std::vector<Sample>& samples, LineFit& fit) {
  for (const Sample& s : samples) {
    const double r = s.y - fit.at(s.x);
    fit.residuals.push_back(r);
    fit.relative_residuals.push_back(s.y != 0.0 ? r / s.y : 0.0);
  }
}

}  // namespace

LineFit fit_scale_robust(const std::vector<Sample>& samples) {
  std::vector<double> ratios;
  for (const Sample& s : samples) {
    if (s.x > 0.0) ratios.push_back(s.y / s.x);
  }
  if (ratios.empty()) throw std::invalid_argument("fit_scale_robust: no sample with x > 0");
  LineFit fit;
  fit.slope = median(ratios);
  set_residuals(samples, fit);
  return fit;
}

LineFit fit_line_robust(const std::vector<Sample>& samples) {
  std::vector<double> slopes;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    for (std::size_t j = i + 1; j < samples.size(); ++j) {
      const double dx = samples[j].x - samples[i].x;
      if (dx != 0.0) slopes.push_back((samples[j].y - samples[i].y) / dx);
    }
  }
  if (slopes.empty()) {
    throw std::invalid_argument("fit_line_robust: x values must not all be equal");
  }
  LineFit fit;
  fit.slope = median(slopes);
  std::vector<double> intercepts;
  for (const Sample& s : samples) intercepts.push_back(s.y - fit.slope * s.x);
  fit.intercept = median(intercepts);
  set_residuals(samples, fit);
  return fit;
}

}  // namespace tilesim::calibration
