// The final outputs one rank owns after its program ran: every output object of the plan whose
// home is the rank (forward: O, LSE; backward: dQ, dKV; both passes: all four). Each is added
// to the run's digest and, with `check`, compared with the reference over the whole sequence
// (runtime/numerics_check.hpp).
#pragma once

#include "runtime/executor/backend.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/executor/numerics_check.hpp"
#include "runtime/executor/output_digest.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

// The check of a rank's outputs per pass: forward (O, LSE) and backward (dQ, dKV); a result
// with no values where the rank owns no such output or `check` is false.
struct OutputChecks {
  CheckResult forward;
  CheckResult backward;
};

OutputChecks digest_and_check_outputs(const Plan& plan, int rank, Backend& backend,
                                      const InputData& inputs, bool check, OutputDigest& digest);

}  // namespace tilesim::runtime
