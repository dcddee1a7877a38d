// Backend `cuda`: one MPI rank per GPU, CUDA kernels, NCCL point-to-point, CUDA-event timings.
//
// Device: rank r uses GPU <local rank> (MPI_COMM_TYPE_SHARED split), cudaSetDevice. If any rank
// finds no usable GPU (or the head_dim has no CUDA kernel, or v_head_dim != head_dim) every rank
// throws BackendUnavailable with the reason, so the job ends cleanly instead of hanging in NCCL.
// Data: Q, KV and dO are stored as bf16 (whatever the scenario dtype; the reference rounds
// the inputs the same way), accumulators, partials and saved forward state (O, LSE, dQ, dKV)
// as fp32; layout as in
// runtime/object_layout.hpp.
// Kernels: cudnn (cuDNN fused attention; blocks it cannot express run on the own kernels, and
// each rank prints at the end how many and why) or own (the WMMA kernels), one BlockKernels
// object (kernels/cuda/block_kernels.hpp) per backend, which owns the cached cuDNN graphs.
// Streams: one compute stream runs compute and merge ops in issue order (block forward into a
// scratch, then accumulate_partial_cuda into the accumulator; backward compute ops are not
// implemented here and fail naming the op); one comm stream runs each comm
// group as ncclGroupStart / ncclSend|ncclRecv... / ncclGroupEnd on a communicator bootstrapped
// over MPI (rank 0's ncclGetUniqueId broadcast). Cross-stream prerequisites become
// cudaStreamWaitEvent on the prerequisite's end event, so the host never blocks on them.
// Timing: a start and an end event around every compute/merge op and every comm group
// (ops of a group share its events), relative to an epoch event recorded after the barrier.
// Failures: a kernel launch error, a failed event query or an NCCL asynchronous error
// (ncclCommGetAsyncError, then ncclCommAbort) throws RankFailure naming the op.
#pragma once

#include <memory>
#include <vector>

#include "kernels/cuda/block_kernels.hpp"
#include "kernels/cuda/device_info.hpp"
#include "runtime/cuda/cuda_resources.hpp"
#include "runtime/executor/backend.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

class CudaBackend final : public Backend {
 public:
  CudaBackend(const Plan& plan, const MpiSession& mpi, const InputData& inputs,
              kernels::KernelFamily family);
  ~CudaBackend() override;

  std::string name() const override { return "cuda"; }
  bool orders_across_streams() const override { return true; }
  void start_clock() override;
  void allocate(int object, ObjectFill fill) override;
  void release(int object) override;
  void launch_compute(const ComputeTask& task, std::span<const int> pending) override;
  void launch_merge(const MergeTask& task, std::span<const int> pending) override;
  void post_group(std::span<const CommTask> tasks, std::span<const int> pending) override;
  void poll(std::vector<int>& finished) override;
  void idle() override;
  std::vector<OpTiming> timings() override;
  std::vector<float> read_object(int object) override;
  void abort_communication() override { nccl_->abort(); }

 private:
  struct EventPair {
    CudaEvent start;
    CudaEvent end;
  };
  static bool stored_as_bf16(Tensor tensor);
  int new_events();
  void wait_for(cudaStream_t stream, std::span<const int> pending, bool comm_stream);
  // Waits for `pending` on `stream` and records a new start event; returns its pair's index.
  int begin_timed(cudaStream_t stream, std::span<const int> pending, bool comm_stream);
  // Records the end event of pair `events` and marks `ops` as issued on that stream.
  void end_timed(cudaStream_t stream, int events, std::span<const int> ops, bool comm_stream);
  std::byte* bytes_of(int object) const;
  float* floats_of(int object) const;

  const Plan& plan_;
  int rank_;
  const InputData& inputs_;
  std::unique_ptr<kernels::BlockKernels> kernels_;
  std::unique_ptr<CudaStream> compute_;
  std::unique_ptr<CudaStream> comm_;
  std::unique_ptr<NcclComm> nccl_;
  std::unique_ptr<CudaEvent> epoch_;
  std::vector<kernels::DeviceBuffer> objects_;  // by object id; empty = absent
  kernels::DeviceBuffer scratch_o_;
  kernels::DeviceBuffer scratch_lse_;
  std::vector<EventPair> events_;
  std::vector<int> event_of_op_;  // -1 = not issued on a stream
  std::vector<bool> on_comm_;
  std::vector<int> in_flight_;
};

}  // namespace tilesim::runtime
