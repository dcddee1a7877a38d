#include "sim/validation/error_stats.hpp"

#include <algorithm>
#include <cmath>

namespace tilesim::validation {

double relative_error(double predicted, double measured) {
  return measured != 0.0 ? (predicted - measured) / measured : 0.0;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  const auto rank = static_cast<std::size_t>(std::max(1.0, std::ceil(p / 100.0 * n)));
  return values[std::min(rank, values.size()) - 1];
}

ErrorSummary summarize_errors(const std::vector<double>& relative_errors) {
  ErrorSummary s;
  std::vector<double> abs_errors;
  for (double e : relative_errors) abs_errors.push_back(std::abs(e));
  s.count = static_cast<int>(abs_errors.size());
  s.median_abs = percentile(abs_errors, 50.0);
  s.p90_abs = percentile(abs_errors, 90.0);
  s.max_abs = percentile(abs_errors, 100.0);
  return s;
}

}  // namespace tilesim::validation
