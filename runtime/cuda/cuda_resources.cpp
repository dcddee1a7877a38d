#include "runtime/cuda/cuda_resources.hpp"

#include <stdexcept>
#include <string>

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

NcclComm::NcclComm(int ranks, const ncclUniqueId& id, int rank) {
  nccl_check(ncclCommInitRank(&comm_, ranks, id, rank), "ncclCommInitRank");
}
NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}
void NcclComm::abort() {
  if (comm_ != nullptr) ncclCommAbort(comm_);
  comm_ = nullptr;
}

}  // namespace tilesim::runtime
