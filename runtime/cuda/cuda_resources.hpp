// RAII owners of the CUDA and NCCL handles the cuda backend uses, and error checks that
// throw std::runtime_error "<what>: <error string>". Plain C++ (CUDA runtime API + NCCL).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>

namespace tilesim::runtime {

void cuda_check(cudaError_t status, const char* what);
void nccl_check(ncclResult_t status, const char* what);

class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_{};
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_{};
};

// A communicator of the job's ranks. abort() (ncclCommAbort) is for the failure path; the
// destructor destroys a communicator that was not aborted.
class NcclComm {
 public:
  NcclComm(int ranks, const ncclUniqueId& id, int rank);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  void abort();

 private:
  ncclComm_t comm_{};
};

}  // namespace tilesim::runtime
