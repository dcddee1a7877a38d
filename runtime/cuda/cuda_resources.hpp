// RAII owners of the CUDA and NCCL handles the cuda backend uses, and error checks that
// throw std::runtime_error "<what>: <error string>". Plain C++ (CUDA runtime API + NCCL).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
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

// A communicator of the job's ranks, non-blocking (ncclConfig_t::blocking = 0), so that no
// NCCL call can block a rank forever: the constructor waits for the initialisation at most
// `init_timeout`, then aborts the communicator and throws; a stalled run's watchdog calls
// abort() (ncclCommAbort), which ends its pending operations. The destructor destroys a
// communicator that was not aborted.
class NcclComm {
 public:
  NcclComm(int ranks, const ncclUniqueId& id, int rank, std::chrono::milliseconds init_timeout);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ncclComm_t get() const { return comm_; }
  void abort();

 private:
  ncclComm_t comm_{};
};

}  // namespace tilesim::runtime
