// What every CUDA rank of a job does before its work: pick GPU <local rank> (MPI_COMM_TYPE_SHARED
// split) and join the job's NCCL communicator (rank 0's ncclGetUniqueId broadcast over MPI).
// Shared by the cuda backend and `tilesim calibrate --backend cuda`.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "runtime/cuda/cuda_resources.hpp"
#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

// This process's index among the processes of its node, by world rank: the device follows the
// world rank whatever order MpiSession::order_ranks gave the plan's ranks.
int local_rank(const MpiSession& mpi);

// cudaSetDevice(local rank); false with `why` when there is no usable GPU for it.
bool select_local_gpu(const MpiSession& mpi, std::string& why);

// Collective over the session's communicator; the NCCL rank is MpiSession::rank().
std::unique_ptr<NcclComm> join_nccl(
    const MpiSession& mpi, std::chrono::milliseconds init_timeout = std::chrono::seconds(60));

}  // namespace tilesim::runtime
