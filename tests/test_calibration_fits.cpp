// Fitting code on synthetic data with known parameters: every parameter is recovered
// within 2% even with +-1% deterministic noise on the timings.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/calibration/compute_fit.hpp"
#include "sim/calibration/link_fit.hpp"

using namespace tilesim;
using namespace tilesim::calibration;

namespace {

// Deterministic +-1% noise.
double noise(int i) { return 1.0 + 0.01 * std::sin(1.7 * i + 0.3); }

}  // namespace

TEST_CASE("calibration: a line through exact points is recovered exactly") {
  const LineFit fit = fit_line({{1.0, 5.0}, {2.0, 7.0}, {4.0, 11.0}});
  CHECK(fit.intercept == Approx(3.0));
  CHECK(fit.slope == Approx(2.0));
  CHECK(fit.max_abs_relative_residual() == Approx(0.0).margin(1e-12));
  CHECK_THROWS_AS(fit_line({{1.0, 1.0}, {1.0, 2.0}}), std::invalid_argument);
}

TEST_CASE("calibration: a robust scale is the median ratio, whatever the outliers") {
  // Ratios y / x: 1.2, 1.1, 1.0, 10 (a descheduled op), 1.05; x = 0 has no ratio.
  const std::vector<Sample> samples = {{1.0, 1.2},  {2.0, 2.2},   {4.0, 4.0},
                                       {5.0, 50.0}, {10.0, 10.5}, {0.0, 3.0}};
  const LineFit fit = fit_scale_robust(samples);
  CHECK(fit.slope == Approx(1.1));  // sorted 1.0 1.05 1.1 1.2 10: the middle one
  CHECK(fit.intercept == 0.0);
  REQUIRE(fit.residuals.size() == samples.size());
  CHECK(fit.residuals[2] == Approx(4.0 - 4.4));
  CHECK(fit.relative_residuals[3] == Approx((50.0 - 5.5) / 50.0));
  // An even count: the mean of the middle two (1.0 1.1 1.2 1.3 -> 1.15).
  CHECK(fit_scale_robust({{1.0, 1.0}, {1.0, 1.1}, {2.0, 2.4}, {1.0, 1.3}}).slope == Approx(1.15));
  // Least squares through the same points follows the outlier.
  CHECK(fit_line(samples).slope > 1.5);
  CHECK_THROWS_AS(fit_scale_robust({{0.0, 1.0}}), std::invalid_argument);
  CHECK_THROWS_AS(fit_scale_robust({}), std::invalid_argument);
}

TEST_CASE("calibration: alpha and beta of t = alpha + B / beta are recovered within 2%") {
  const double alpha_s = 25e-6, beta = 6.5e9;
  std::vector<MessageTiming> timings;
  int i = 0;
  for (double bytes = 4096; bytes <= 64.0 * (1 << 20); bytes *= 2, ++i) {
    timings.push_back({bytes, (alpha_s + bytes / beta) * noise(i)});
  }
  const LinkFit fit = fit_link(timings);
  CHECK(fit.alpha_s == Approx(alpha_s).epsilon(0.02));
  CHECK(fit.beta_bytes_per_s == Approx(beta).epsilon(0.02));
  CHECK(fit.line.max_abs_relative_residual() < 0.02);
}

TEST_CASE("calibration: peak, efficiency table and causal factor are recovered within 2%") {
  const double peak = 20e9, launch_s = 40e-6;
  // Known efficiency by block size and causal factor by block size.
  const std::vector<std::pair<double, double>> eff = {
      {128, 0.5}, {256, 0.7}, {512, 0.9}, {1024, 1.0}};
  const std::vector<double> causal = {0.6, 0.7, 0.8, 0.9};
  std::vector<BlockTiming> timings;
  for (std::size_t k = 0; k < eff.size(); ++k) {
    const double n = eff[k].first;
    const double full_flops = 4.0 * n * n * 4 * 64;
    const double causal_flops = 4.0 * n * (n + 1) / 2 * 4 * 64;
    const int i = static_cast<int>(k);
    timings.push_back({Pass::fwd, 64, n, false, full_flops,
                       (launch_s + full_flops / (peak * eff[k].second)) * noise(i)});
    timings.push_back({Pass::fwd, 64, n, true, causal_flops,
                       launch_s + causal_flops / (peak * eff[k].second * causal[k])});
    timings.push_back({Pass::bwd, 64, n, false, 2.5 * full_flops,
                       launch_s + 2.5 * full_flops / (peak * 0.5 * eff[k].second)});
  }
  const ComputeFit fit = fit_compute(timings, launch_s);
  CHECK(fit.peak_flops == Approx(peak).epsilon(0.02));
  CHECK(fit.launch_overhead_s == launch_s);
  for (std::size_t k = 0; k < eff.size(); ++k) {
    INFO("block " << eff[k].first);
    CHECK(fit.forward.at(64).at(eff[k].first) == Approx(eff[k].second).epsilon(0.02));
    CHECK(fit.backward.at(64).at(eff[k].first) == Approx(0.5 * eff[k].second).epsilon(0.02));
    CHECK(fit.causal_efficiency.at(eff[k].first) == Approx(causal[k]).epsilon(0.02));
  }
  for (double r : fit.relative_residuals) CHECK(std::abs(r) < 0.02);
}

TEST_CASE("calibration: a timing not longer than the launch overhead is rejected") {
  CHECK_THROWS_AS(fit_compute({{Pass::fwd, 64, 128, false, 1e6, 1e-6}}, 2e-6),
                  std::invalid_argument);
  CHECK_THROWS_AS(fit_compute({}, 0.0), std::invalid_argument);
}
