// MPI microbenchmarks of the cpu backend for `tilesim calibrate` (every rank calls each one
// collectively; results are valid on rank 0).
//
// Point to point: ranks 0 and 1 ping-pong one message of B bytes, posted with MPI_Isend /
// MPI_Irecv and completed by MPI_Test polling with the executor's 20 us idle sleep, exactly as
// the backend moves a plan's objects; one-way time = round trip / 2, median of the repeats.
// Shared cores: every rank times one forward block alone (one rank at a time, fastest of 3:
// the speed the kernel table is fitted at), then all ranks compute at once, 7 times (fastest:
// interference from other processes only adds time); cores = ranks * t_alone / t_together
// (median over ranks), capped at the rank count: the compute the host gives its ranks at
// once, in units of one rank alone, which the simulator shares fairly.
// Compute under communication: all ranks compute a block at once, first alone, then while a
// ComputeWorker computes and the main thread keeps exchanging `bytes`-sized messages with a
// partner rank (r xor 1); comm_slowdown = t_with / t_without - 1 (>= 0).
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/calibration/calibration_kernels.hpp"
#include "runtime/mpi/mpi_session.hpp"
#include "sim/calibration/link_fit.hpp"

namespace tilesim::runtime {

// A barrier whose waiting ranks sleep (MPI_Ibarrier polled every 200 us) instead of spinning
// as MPI_Barrier does, so that a rank being timed keeps its core (and its hyperthread
// sibling) to itself.
void quiet_barrier(const MpiSession& mpi);

std::vector<calibration::MessageTiming> time_ping_pong(const MpiSession& mpi,
                                                       const std::vector<double>& sizes_bytes,
                                                       int repeats);
double measure_shared_cores(const MpiSession& mpi, const KernelBenchOptions& options,
                            std::int64_t tokens);
double measure_comm_slowdown(const MpiSession& mpi, const KernelBenchOptions& options,
                             std::int64_t tokens, double bytes);

}  // namespace tilesim::runtime
