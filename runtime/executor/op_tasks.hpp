// Turns a compute or merge op of a rank's program into the task a backend runs
// (runtime/backend.hpp), naming the op's objects by tensor:
//   compute fwd: reads Q, KV; writes O, LSE.
//   compute bwd: reads Q, KV, dO, O, LSE (final); writes dQ, dKV.
//   merge:       reads O/LSE partials (an O partial pairs with the LSE partial of the same
//                chunk made on the same rank); writes the target O and LSE. Or reads dQ
//                (dKV) partials and writes one dQ (dKV) target: an elementwise sum.
// Throws RankFailure naming the op when an object the op needs is missing.
#pragma once

#include "runtime/executor/backend.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

ComputeTask compute_task(const Plan& plan, int rank, int op);
MergeTask merge_task(const Plan& plan, int rank, int op);

}  // namespace tilesim::runtime
