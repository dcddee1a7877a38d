#include "runtime/cuda/cuda_rank_setup.hpp"

#include <fmt/format.h>

#include "kernels/cuda/device_info.hpp"

namespace tilesim::runtime {

int local_rank(const MpiSession& mpi) {
  MPI_Comm local = MPI_COMM_NULL;
  mpi_check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, mpi.world_rank(),
                                MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  int rank = 0;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_free(&local);
  return rank;
}

bool select_local_gpu(const MpiSession& mpi, std::string& why) {
  if (!kernels::cuda_device_available(&why)) return false;
  const int local = local_rank(mpi);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || local >= count) {
    why = fmt::format("local rank {} needs GPU {} but this node has {}", local, local, count);
    return false;
  }
  if (cudaSetDevice(local) != cudaSuccess) {
    why = fmt::format("cudaSetDevice({}) failed", local);
    return false;
  }
  return true;
}

std::unique_ptr<NcclComm> join_nccl(const MpiSession& mpi, std::chrono::milliseconds init_timeout) {
  ncclUniqueId id{};
  if (mpi.rank() == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_check(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, mpi.comm()), "MPI_Bcast");
  return std::make_unique<NcclComm>(mpi.size(), id, mpi.rank(), init_timeout);
}

}  // namespace tilesim::runtime
