// Summary statistics of prediction errors.
//
// The error of a prediction p against a measurement m is (p - m) / m (relative, signed).
// A distribution is summarised by the median, the 90th percentile and the maximum of |error|;
// percentiles use the nearest-rank rule: p-th percentile = the ceil(p/100 * n)-th smallest.
#pragma once

#include <vector>

namespace tilesim::validation {

struct ErrorSummary {
  int count = 0;
  double median_abs = 0.0;
  double p90_abs = 0.0;
  double max_abs = 0.0;
};

double relative_error(double predicted, double measured);
// Nearest-rank percentile of `values` (p in (0, 100]); 0 for an empty set.
double percentile(std::vector<double> values, double p);
ErrorSummary summarize_errors(const std::vector<double>& relative_errors);

}  // namespace tilesim::validation
