// Microbenchmarks of the cpu backend's compute-stream work, for `tilesim calibrate`.
//
// A block of n x n tokens is timed exactly as the cpu backend runs one block pair: the forward
// kernel into a scratch O/LSE, then the running merge into the accumulator (backward: the
// FlashAttention-2 backward kernel). Every configuration is timed once per round, for
// `repeats` rounds (the first only sizes the samples to >= 2 ms and warms the caches), and the
// fastest sample is kept: interference from other processes only adds time, and rounds spread
// a burst of it over many configurations instead of spoiling one. FLOPs: forward 4 * b * pairs * h
// * d over the visible pairs (the causal diagonal block has n (n + 1) / 2), backward 2.5x that. The
// launch overhead is the round trip of an empty task through a ComputeWorker, waited for as the
// executor waits (woken by the completion): what each compute op costs beyond its kernel. Merge
// bandwidth: B / t for the running merge of one partial of n rows, B = the bytes the simulator
// charges a merge (partial read
// + accumulator read and written).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/block_shape.hpp"
#include "sim/calibration/compute_fit.hpp"

namespace tilesim::runtime {

struct KernelBenchOptions {
  int batch = 1;
  int heads = 4;
  int kv_heads = 4;
  std::vector<int> head_dims{64};
  std::vector<std::int64_t> tokens{128, 256, 512, 1024};
  bool backward = true;
  int repeats = 3;
  double min_seconds = 0.05;
};

std::vector<calibration::BlockTiming> time_block_kernels(const KernelBenchOptions& options);

// What every kernel calibration (cpu here, cuda in calibration_cuda.hpp) times: each head_dim x
// tokens as a full and a causal forward block and a full backward block (options.backward),
// FLOPs set, seconds unmeasured. The benchmarked n x n block's shape and mask:
std::vector<calibration::BlockTiming> block_grid(const KernelBenchOptions& options);
kernels::BlockShape bench_block_shape(const KernelBenchOptions& options, int head_dim,
                                      std::int64_t tokens);
kernels::PositionMask bench_block_mask(bool causal);

// Seconds of `calls` back-to-back runs of grid entry `index`.
using BlockSampler = std::function<double(std::size_t index, int calls)>;
// Rounds over the whole grid, options.repeats times, keeping each entry's fastest per-call
// time: a burst of load from another process then spoils one sample of several sizes, not
// every sample of one size. The first round sizes each sample to >= sample_seconds (a shorter
// first sample is not kept; it also warms the caches). Entries never measured get 0.
void keep_fastest_samples(std::vector<calibration::BlockTiming>& grid,
                          const KernelBenchOptions& options, double sample_seconds,
                          const BlockSampler& sample);
double time_launch_overhead_s();
double time_merge_bytes_per_s(const KernelBenchOptions& options);
// One forward block of n x n tokens at the first head_dim (used by the contention benchmarks).
double time_one_forward_block_s(const KernelBenchOptions& options, std::int64_t tokens);

}  // namespace tilesim::runtime
