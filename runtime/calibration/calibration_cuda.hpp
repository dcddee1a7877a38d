// Microbenchmarks of the cuda backend for `tilesim calibrate --backend cuda` (one MPI rank per
// GPU; each rank first selects GPU <local rank>, runtime/cuda_rank_setup.hpp).
//
// Kernels (rank 0's GPU): one n x n block per (head_dim, n, causal, pass), run as the backend
// runs a block pair, on the chosen kernels (kernels/cuda/block_kernels.hpp: cudnn or own):
// forward = BlockKernels::forward into a scratch O/LSE, then accumulate_partial_cuda into the
// accumulator; backward = BlockKernels::backward (cudnn: including its 16-bit to fp32 adds).
// Inputs are
// bf16. A sample is `calls` back-to-back launches on one stream timed by CUDA events (sized
// to >= 1 ms); each configuration is sampled once per round over several rounds and the
// fastest kept, as on the cpu. FLOPs as in calibration_kernels.hpp.
// Launch overhead: host wall time per launch of a one-row accumulate_partial_cuda, 1000
// launches then one synchronize (the GPU work is negligible, so this is what each compute op
// costs beyond its kernel). Merge bandwidth: accumulate_partial_cuda over the largest block's
// rows, bytes as the simulator charges a merge.
// Point to point (ranks 0 and 1): NCCL ping-pong on one stream, ncclSend then ncclRecv each in
// its own group, one-way = round trip / 2 by CUDA events, median of the repeats.
// Compute under communication: rank 0 times a forward block alone and while ranks 0 and 1
// keep exchanging `bytes` messages on a second stream; comm_slowdown = t_with / t_alone - 1.
#pragma once

#include <vector>

#include "kernels/cuda/block_kernels.hpp"
#include "runtime/calibration/calibration_kernels.hpp"
#include "runtime/mpi/mpi_session.hpp"
#include "sim/calibration/compute_fit.hpp"
#include "sim/calibration/link_fit.hpp"

namespace tilesim::runtime {

std::vector<calibration::BlockTiming> time_cuda_block_kernels(const KernelBenchOptions& options,
                                                              kernels::KernelFamily family);
double time_cuda_launch_overhead_s();
double time_cuda_merge_bytes_per_s(const KernelBenchOptions& options);

// Collective over the world; ranks other than 0 and 1 only take part in the barriers.
std::vector<calibration::MessageTiming> time_nccl_ping_pong(const MpiSession& mpi,
                                                            const std::vector<double>& sizes_bytes,
                                                            int repeats);
double measure_cuda_comm_slowdown(const MpiSession& mpi, const KernelBenchOptions& options,
                                  kernels::KernelFamily family, std::int64_t tokens, double bytes);

}  // namespace tilesim::runtime
