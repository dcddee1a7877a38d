// Backend `cpu`: one MPI process per plan rank, CPU kernels, steady_clock timings.
//
// Data: every object is fp32 whatever the scenario dtype (the plan's byte counts stay those of
// the dtype; only the values are fp32), in the layout of runtime/object_layout.hpp.
// Compute stream: a ComputeWorker thread runs compute and merge ops in issue order with the
// fast CPU kernels (kernels/cpu/attention_cpu.hpp); a compute op loops over the q block x kv
// block pairs the plan's mask does not skip (runtime/cpu_block_ops.hpp): forward accumulates
// each pair's O/LSE into the accumulators (online merge), backward adds into dQ and dKV.
// Comm stream: a group's sends and receives are MPI_Isend/MPI_Irecv on the session's communicator
// (ranks in plan order, MpiSession::order_ranks) with tag
// = k for the k-th send a->b / recv b<-a, so matches are exact; MPI_Test polls them from the
// main thread. A receive checks the element count it got.
// Timings: compute ops from the worker's start/end; comm ops from post to the poll that saw
// them complete.
#pragma once

#include <mpi.h>

#include <chrono>
#include <vector>

#include "runtime/cpu/cpu_block_ops.hpp"
#include "runtime/executor/backend.hpp"
#include "runtime/executor/compute_worker.hpp"
#include "runtime/executor/input_data.hpp"

namespace tilesim::runtime {

class CpuBackend final : public Backend {
 public:
  CpuBackend(const Plan& plan, int rank, const InputData& inputs, MPI_Comm comm, int threads);
  ~CpuBackend() override;

  std::string name() const override { return "cpu"; }
  bool orders_across_streams() const override { return false; }
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

 private:
  int idle_streak_ = 0;  // idle() calls since something last finished
  using Clock = std::chrono::steady_clock;
  struct Request {
    int op = -1;
    int object = -1;
    bool recv = false;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  Picoseconds since_start(Clock::time_point t) const;
  std::span<float> data(int object);

  const Plan& plan_;
  int rank_;
  const InputData& inputs_;
  MPI_Comm comm_;
  int threads_;
  int tag_limit_ = 32767;
  Clock::time_point epoch_;
  std::vector<std::vector<float>> objects_;  // by object id; empty = absent
  std::vector<OpTiming> timings_;
  std::vector<Request> requests_;
  ForwardScratch scratch_;  // only the compute worker touches it
  ComputeWorker worker_;    // last: joined first, while the buffers above still exist
};

}  // namespace tilesim::runtime
