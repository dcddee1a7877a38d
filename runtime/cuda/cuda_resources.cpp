#include "runtime/cuda/cuda_resources.hpp"

#include <stdexcept>
#include <string>
#include <thread>

namespace tilesim::runtime {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
  }
}

void nccl_check(ncclResult_t status, const char* what) {
  if (status != ncclSuccess && status != ncclInProgress) {
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(status));
  }
}

CudaStream::CudaStream() {
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}
CudaStream::~CudaStream() { cudaStreamDestroy(stream_); }

CudaEvent::CudaEvent() { cuda_check(cudaEventCreate(&event_), "cudaEventCreate"); }
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}
CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(other.event_) { other.event_ = nullptr; }

NcclComm::NcclComm(int ranks, const ncclUniqueId& id, int rank,
                   std::chrono::milliseconds init_timeout) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  nccl_check(ncclCommInitRankConfig(&comm_, ranks, id, rank, &config), "ncclCommInitRankConfig");
  // Non-blocking: the communicator is ready when its asynchronous state leaves ncclInProgress.
  const auto deadline = std::chrono::steady_clock::now() + init_timeout;
  ncclResult_t state = ncclInProgress;
  while (ncclCommGetAsyncError(comm_, &state) == ncclSuccess && state == ncclInProgress) {
    if (std::chrono::steady_clock::now() > deadline) {
      abort();
      throw std::runtime_error("ncclCommInitRankConfig: not ready after " +
                               std::to_string(init_timeout.count()) +
                               " ms (a peer never joined); communicator aborted");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (state != ncclSuccess) {
    abort();
    nccl_check(state, "ncclCommInitRankConfig");
  }
}
NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}
void NcclComm::abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

}  // namespace tilesim::runtime
