// Turns a compute or merge op of a rank's program into the task a backend runs
// (runtime/backend.hpp), naming the op's objects by tensor:
//   compute fwd: reads Q, KV; writes O, LSE.
//   compute bwd: reads Q, KV, dO, O, LSE (final); writes dQ, dKV.
//   merge:       for every O it writes, reads that chunk's O/LSE partials (an O partial pairs
//                with the LSE partial of the same chunk made on the same rank) and writes the
//                O and LSE; for every dQ (dKV) it writes, reads that chunk's dQ (dKV) partials:
//                an elementwise sum. One merge op is one task however many targets it has.
// Throws RankFailure naming the op when an object the op needs is missing.
#pragma once

#include "runtime/executor/backend.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

ComputeTask compute_task(const Plan& plan, int rank, int op);
MergeTask merge_task(const Plan& plan, int rank, int op);

}  // namespace tilesim::runtime
