// Chrome trace JSON (opens in Perfetto / chrome://tracing).
//
// One process per rank ("GPU g (rank r)") with two threads, "compute" and
// "comm"; every compute, merge and transfer is a complete event ("X") named by
// its op and carrying its op id (rank, index) so a simulated and a measured
// trace line up. Link utilisation is a counter track per link ("C" events, in
// GB/s) under a "links" process. Times in microseconds with picosecond digits,
// printed with fixed precision so the same result gives the same bytes.
#pragma once

#include <ostream>
#include <vector>

#include "sim/model/simulation_result.hpp"
#include "sim/plan/plan.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

void write_chrome_trace(std::ostream& out, const Plan& plan, const SimulationResult& result,
                        const std::vector<int>& placement, const Topology* topology);

}  // namespace tilesim
