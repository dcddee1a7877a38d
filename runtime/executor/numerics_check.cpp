#include "runtime/executor/numerics_check.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "runtime/executor/object_layout.hpp"

namespace tilesim::runtime {

void CheckResult::combine(const CheckResult& other) {
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  max_abs_reference = std::max(max_abs_reference, other.max_abs_reference);
  values += other.values;
}

CheckResult check_output(const Plan& plan, ReferenceOutputs& reference, int object,
                         std::span<const float> data) {
  if (data.size() != static_cast<std::size_t>(object_extent(plan, object).elements())) {
    throw std::invalid_argument("check_output: " + plan.object(object).name +
                                " does not have the size of its object");
  }
  const std::vector<double> want = reference.object_values(object);
  CheckResult result;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const double g = data[i];
    const double w = want[i];
    result.values += 1;
    if (std::isinf(w) && g == w) continue;
    const double err = std::isfinite(g) ? std::abs(g - w) : INFINITY;
    result.max_abs_error = std::max(result.max_abs_error, err);
    result.max_abs_reference = std::max(result.max_abs_reference, std::abs(w));
  }
  return result;
}

}  // namespace tilesim::runtime
