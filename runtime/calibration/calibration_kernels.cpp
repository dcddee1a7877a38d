#include "runtime/calibration/calibration_kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "kernels/cpu/attention_cpu.hpp"
#include "runtime/calibration/probe_clock.hpp"
#include "runtime/executor/compute_worker.hpp"

namespace tilesim::runtime {
namespace {

using Clock = ProbeClock;

// The fastest of the repeats: the host is shared, and interference only ever adds time.
double best_time_s(const std::function<void()>& body, int repeats, double min_seconds) {
  std::vector<double> times;
  const auto begin = Clock::now();
  while (static_cast<int>(times.size()) < repeats || seconds_since(begin) < min_seconds) {
    const auto t0 = Clock::now();
    body();
    times.push_back(seconds_since(t0));
    if (times.size() >= 1000) break;
  }
  return *std::min_element(times.begin(), times.end());
}

std::vector<float> filled(std::int64_t elements, float scale) {
  std::vector<float> v(static_cast<std::size_t>(elements));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = scale * static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  }
  return v;
}

// Buffers of one n x n block and the work the cpu backend does on it.
struct BlockBench {
  kernels::BlockShape shape;
  kernels::PositionMask mask;
  std::vector<float> q, k, v, o, lse, acc_o, acc_lse, d_o, dq, dk, dv;

  BlockBench(const KernelBenchOptions& opt, int head_dim, std::int64_t n, bool causal)
      : shape(bench_block_shape(opt, head_dim, n)),
        mask(bench_block_mask(causal)),
        q(filled(shape.q_elements(), 0.5F)),
        k(filled(shape.kv_elements(), 0.4F)),
        v(filled(shape.kv_elements(), 0.3F)),
        o(static_cast<std::size_t>(shape.q_elements())),
        lse(static_cast<std::size_t>(shape.lse_elements())),
        acc_o(o.size(), 0.0F),
        acc_lse(lse.size(), -std::numeric_limits<float>::infinity()),
        d_o(filled(shape.q_elements(), 0.2F)),
        dq(o.size()),
        dk(k.size()),
        dv(v.size()) {}

  void forward() {
    kernels::attention_forward_cpu(shape, mask, q, k, v, o, lse);
    kernels::accumulate_partial_cpu(kernels::output_rows(shape), o, lse, acc_o, acc_lse);
  }
  void backward() {
    kernels::attention_backward_cpu(shape, mask, q, k, v, o, d_o, lse, dq, dk, dv);
  }
};

}  // namespace

std::vector<calibration::BlockTiming> block_grid(const KernelBenchOptions& options) {
  std::vector<calibration::BlockTiming> grid;
  for (int d : options.head_dims) {
    for (std::int64_t n : options.tokens) {
      for (bool causal : {false, true}) {
        for (Pass pass : {Pass::fwd, Pass::bwd}) {
          if (pass == Pass::bwd && (causal || !options.backward)) continue;
          const double flops =
              kernels::forward_flops(bench_block_shape(options, d, n), bench_block_mask(causal));
          grid.push_back({pass, d, static_cast<double>(n), causal,
                          pass == Pass::fwd ? flops : 2.5 * flops,
                          std::numeric_limits<double>::infinity()});
        }
      }
    }
  }
  return grid;
}

kernels::BlockShape bench_block_shape(const KernelBenchOptions& options, int head_dim,
                                      std::int64_t tokens) {
  return {options.batch, options.heads, options.kv_heads, head_dim, tokens, tokens};
}

kernels::PositionMask bench_block_mask(bool causal) {
  return {causal ? kernels::MaskKind::causal : kernels::MaskKind::full, {0, 1}, {0, 1}};
}

void keep_fastest_samples(std::vector<calibration::BlockTiming>& grid,
                          const KernelBenchOptions& options, double sample_seconds,
                          const BlockSampler& sample) {
  std::vector<int> calls(grid.size(), 1);  // per sample, so that a sample lasts >= sample_seconds
  for (int round = 0; round < options.repeats; ++round) {
    for (std::size_t i = 0; i < grid.size(); ++i) {
      const double sample_s = sample(i, calls[i]);
      if (round == 0 && sample_s < sample_seconds) {
        calls[i] = static_cast<int>(std::ceil(sample_seconds / std::max(sample_s, 1e-7)));
        continue;
      }
      grid[i].seconds = std::min(grid[i].seconds, sample_s / calls[i]);
    }
  }
  for (calibration::BlockTiming& t : grid) {
    if (!std::isfinite(t.seconds)) t.seconds = 0.0;
  }
}

std::vector<calibration::BlockTiming> time_block_kernels(const KernelBenchOptions& options) {
  std::vector<calibration::BlockTiming> grid = block_grid(options);
  std::vector<std::unique_ptr<BlockBench>> benches;
  for (const calibration::BlockTiming& t : grid) {
    benches.push_back(std::make_unique<BlockBench>(options, t.head_dim,
                                                   static_cast<std::int64_t>(t.tokens), t.causal));
  }
  keep_fastest_samples(grid, options, 0.002, [&](std::size_t i, int calls) {
    BlockBench& bench = *benches[i];
    const bool fwd = grid[i].pass == Pass::fwd;
    const auto t0 = Clock::now();
    for (int c = 0; c < calls; ++c) fwd ? bench.forward() : bench.backward();
    return seconds_since(t0);
  });
  return grid;
}

double time_launch_overhead_s() {
  ComputeWorker worker;
  std::vector<double> times;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = Clock::now();
    worker.submit(i, [] {});
    std::vector<ComputeWorker::Finished> done;
    std::optional<ComputeWorker::Error> error;
    while (done.empty()) {
      worker.take_finished(done, error);
      if (done.empty()) worker.wait_for_finished(std::chrono::microseconds(20));
    }
    times.push_back(seconds_since(t0));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double time_merge_bytes_per_s(const KernelBenchOptions& options) {
  const kernels::RowsShape rows{options.batch, options.tokens.back(), options.heads,
                                options.head_dims.front()};
  std::vector<float> po = filled(rows.o_elements(), 0.1F), pl = filled(rows.lse_elements(), 1.0F);
  std::vector<float> ao = filled(rows.o_elements(), 0.2F), al = filled(rows.lse_elements(), 0.5F);
  const double t = best_time_s([&] { kernels::accumulate_partial_cpu(rows, po, pl, ao, al); },
                               options.repeats, options.min_seconds);
  const double bytes = 3.0 * 4.0 * static_cast<double>(rows.o_elements() + rows.lse_elements());
  return bytes / t;
}

double time_one_forward_block_s(const KernelBenchOptions& options, std::int64_t tokens) {
  BlockBench bench(options, options.head_dims.front(), tokens, false);
  const auto t0 = Clock::now();
  bench.forward();
  return seconds_since(t0);
}

}  // namespace tilesim::runtime
