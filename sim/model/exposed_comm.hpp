// Exposed communication of one rank, from its op timings.
//
// The compute stream runs compute and merge ops in program order; the only
// reason it idles before an op is a transfer that op waits for. So a rank's
// exposed communication is the sum of the gaps on its compute stream (from 0 to
// its first compute-stream op, and between consecutive ones), plus, after its
// last compute-stream op, the time until the last of its final outputs arrives
// (e.g. Ulysses' all-to-all of O). Idle time of a rank that has no more work
// (a plain causal ring's early ranks keep forwarding KV) is imbalance, not
// exposed communication.
#pragma once

#include "sim/core/units.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"

namespace tilesim {

Picoseconds exposed_comm_ps(const Plan& plan, const std::vector<OpTiming>& timings, int rank);

// Fills RankTotals::exposed_comm_ps of every rank.
void fill_exposed_comm(const Plan& plan, SimulationResult& result);

}  // namespace tilesim
