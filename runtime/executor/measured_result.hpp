// Turns the per-rank measurements of a run into the SimulationResult the simulator produces,
// so that `run` and `simulate` share the result JSON and the Chrome trace.
//
// Per op: start/end as measured (comm ops: from posting the group to completion). Transfers:
// the k-th send a->b pairs with the k-th recv b<-a; posted = the later of the two posts,
// end = the later completion. Per rank: end = last op end, compute busy = sum of compute and
// merge durations, comm active = union of comm op intervals, FLOPs/bytes/peak memory from the
// executor (plan sizes). single_gpu_s is the sum of all ranks' compute time: what one device
// would spend on the same blocks with the same kernels, without communication.
#pragma once

#include <vector>

#include "runtime/executor/executor.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim::runtime {

SimulationResult measured_result(const Plan& plan, const std::vector<RankRun>& ranks,
                                 double wall_s);

}  // namespace tilesim::runtime
