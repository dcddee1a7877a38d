// Checks a rank's final outputs against the reference attention over the whole sequence.
//
// Every output object (O, LSE of the forward; dQ, dKV of the backward) is compared, at its home
// rank, with the reference of runtime/reference_outputs.hpp in the object's layout (its chunk's
// blocks, its head group's heads), computed in double precision on the same (possibly rounded)
// inputs as the backend.
// Errors: max_abs_error = max |x - ref| over all compared values (both -inf counts as equal);
// max_rel_error = max_abs_error / max |ref| (a norm-wise relative error, robust to values
// near zero).
#pragma once

#include <span>

#include "runtime/executor/reference_outputs.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

struct CheckResult {
  double max_abs_error = 0.0;
  double max_abs_reference = 0.0;
  std::int64_t values = 0;
  double max_rel_error() const {
    return max_abs_reference > 0 ? max_abs_error / max_abs_reference : max_abs_error;
  }
  void combine(const CheckResult& other);
};

// Compares the final contents of one O, LSE, dQ or dKV object (layout of object_layout.hpp).
// Throws std::invalid_argument when `data` does not have the object's size.
CheckResult check_output(const Plan& plan, ReferenceOutputs& reference, int object,
                         std::span<const float> data);

}  // namespace tilesim::runtime
