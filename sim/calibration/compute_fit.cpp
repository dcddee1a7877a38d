#include "sim/calibration/compute_fit.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim::calibration {
namespace {

double rate(const BlockTiming& t, double launch_s) {
  const double busy = t.seconds - launch_s;
  if (busy <= 0.0) {
    throw std::invalid_argument("fit_compute: a timing is not longer than the launch overhead");
  }
  return t.flops / busy;
}

double clamp_efficiency(double e) { return std::clamp(e, 0.01, 1.0); }

}  // namespace

ComputeFit fit_compute(const std::vector<BlockTiming>& timings, double launch_overhead_s) {
  ComputeFit fit;
  fit.launch_overhead_s = launch_overhead_s;
  int first_head_dim = -1;
  for (const BlockTiming& t : timings) {
    if (t.causal) continue;
    fit.peak_flops = std::max(fit.peak_flops, rate(t, launch_overhead_s));
    if (t.pass == Pass::fwd && first_head_dim < 0) first_head_dim = t.head_dim;
  }
  if (first_head_dim < 0) throw std::invalid_argument("fit_compute: no full forward timing");
  if (fit.peak_flops <= 0.0) throw std::invalid_argument("fit_compute: no full forward timing");
  // Full-mask rates by (pass, head_dim, tokens), for the causal ratio.
  std::map<std::pair<int, double>, double> full_forward_rate;
  for (const BlockTiming& t : timings) {
    if (t.causal) continue;
    const double e = clamp_efficiency(rate(t, launch_overhead_s) / fit.peak_flops);
    auto& table = t.pass == Pass::fwd ? fit.forward : fit.backward;
    table[t.head_dim].points.emplace_back(t.tokens, e);
    if (t.pass == Pass::fwd) full_forward_rate[{t.head_dim, t.tokens}] = rate(t, launch_overhead_s);
  }
  for (const BlockTiming& t : timings) {
    if (!t.causal || t.pass != Pass::fwd || t.head_dim != first_head_dim) continue;
    auto it = full_forward_rate.find({t.head_dim, t.tokens});
    if (it == full_forward_rate.end()) continue;
    fit.causal_efficiency.points.emplace_back(
        t.tokens, clamp_efficiency(rate(t, launch_overhead_s) / it->second));
  }
  for (auto* table : {&fit.forward, &fit.backward}) {
    for (auto& [d, curve] : *table) std::sort(curve.points.begin(), curve.points.end());
  }
  std::sort(fit.causal_efficiency.points.begin(), fit.causal_efficiency.points.end());
  if (fit.causal_efficiency.points.empty()) fit.causal_efficiency.points = {{1.0, 1.0}};
  for (const BlockTiming& t : timings) {
    fit.relative_residuals.push_back((t.seconds - model_seconds(fit, t)) / t.seconds);
  }
  return fit;
}

double model_seconds(const ComputeFit& fit, const BlockTiming& block) {
  CalibrationProfile profile;
  profile.forward = fit.forward;
  profile.backward = fit.backward;
  double e = profile.efficiency(block.pass, block.head_dim, block.tokens);
  if (block.causal) e *= fit.causal_efficiency.at(block.tokens);
  return fit.launch_overhead_s + block.flops / (fit.peak_flops * e);
}

}  // namespace tilesim::calibration
