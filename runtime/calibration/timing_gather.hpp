// Moves every rank's op timings to rank 0 (a collective; the result is valid on rank 0).
#pragma once

#include <vector>

#include "runtime/mpi/mpi_session.hpp"
#include "sim/model/simulation_result.hpp"

namespace tilesim::runtime {

std::vector<std::vector<OpTiming>> gather_timings(const MpiSession& mpi,
                                                  const std::vector<OpTiming>& mine);

}  // namespace tilesim::runtime
