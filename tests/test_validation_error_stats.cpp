#include <catch2/catch.hpp>

#include "sim/validation/error_stats.hpp"

using namespace tilesim::validation;

TEST_CASE("validation: error summaries use nearest-rank percentiles of |error|") {
  const ErrorSummary s =
      summarize_errors({0.01, -0.02, 0.03, -0.04, 0.05, 0.06, -0.07, 0.08, 0.09, -0.10});
  CHECK(s.count == 10);
  CHECK(s.median_abs == Approx(0.05));
  CHECK(s.p90_abs == Approx(0.09));
  CHECK(s.max_abs == Approx(0.10));
  CHECK(relative_error(1.1, 1.0) == Approx(0.1));
}
