#include "sim/model/efficiency_curve.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim {

CurveLookup EfficiencyCurve::lookup(double tokens) const {
  if (points.empty()) return {};
  const auto& [first_tokens, first_value] = points.front();
  const auto& [last_tokens, last_value] = points.back();
  if (tokens < first_tokens) {
    if (points.size() == 1) return {first_value, TableSide::below, first_tokens};
    const auto& [next_tokens, next_value] = points[1];
    const double slope = (next_value - first_value) / std::log2(next_tokens / first_tokens);
    const double value = first_value + slope * std::log2(tokens / first_tokens);
    return {std::max(kMinEfficiency, value), TableSide::below, first_tokens};
  }
  if (tokens > last_tokens) return {last_value, TableSide::above, last_tokens};
  auto hi = std::lower_bound(points.begin(), points.end(), tokens,
                             [](const auto& p, double t) { return p.first < t; });
  if (hi->first == tokens) return {hi->second, TableSide::inside, 0.0};
  auto lo = hi - 1;
  const double x = std::log2(tokens / lo->first) / std::log2(hi->first / lo->first);
  return {lo->second + (hi->second - lo->second) * x, TableSide::inside, 0.0};
}

}  // namespace tilesim
