#include "runtime/calibration/calibration_cuda.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "kernels/cuda/attention_cuda.hpp"
#include "kernels/cuda/device_info.hpp"
#include "runtime/calibration/calibration_comm.hpp"
#include "runtime/cuda/cuda_rank_setup.hpp"
#include "runtime/cuda/cuda_resources.hpp"
#include "sim/calibration/linear_fit.hpp"

namespace tilesim::runtime {
namespace {

namespace tk = kernels;

// Milliseconds between two events recorded on one stream, after synchronizing the second.
double elapsed_s(const CudaEvent& start, const CudaEvent& stop) {
  cuda_check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0.0F;
  cuda_check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

// Device buffers of one n x n block and the backend's work on it.
struct CudaBlockBench {
  tk::BlockKernels& kernels;
  tk::BlockShape shape;
  tk::PositionMask mask;
  tk::DeviceBuffer q, k, v, d_o, o, lse, acc_o, acc_lse, d_rowsum, dq, dk, dv;

  CudaBlockBench(const KernelBenchOptions& opt, int head_dim, std::int64_t n, bool causal,
                 tk::BlockKernels& block_kernels)
      : kernels(block_kernels),
        shape(bench_block_shape(opt, head_dim, n)),
        mask(bench_block_mask(causal)),
        q(bytes16(shape.q_elements())),
        k(bytes16(shape.kv_elements())),
        v(bytes16(shape.kv_elements())),
        d_o(bytes16(shape.q_elements())),
        o(bytes32(shape.q_elements())),
        lse(bytes32(shape.lse_elements())),
        acc_o(bytes32(shape.q_elements())),
        acc_lse(bytes32(shape.lse_elements())),
        d_rowsum(bytes32(shape.lse_elements())),
        dq(bytes32(shape.q_elements())),
        dk(bytes32(shape.kv_elements())),
        dv(bytes32(shape.kv_elements())) {
    // Zero inputs are a valid (uniform-softmax) problem: kernel time does not depend on values.
    for (tk::DeviceBuffer* b : {&q, &k, &v, &d_o, &o, &acc_o, &d_rowsum, &dq, &dk, &dv}) {
      b->fill_zero();
    }
    // The backward reads the forward's O and LSE.
    kernels.forward(shape, mask, tk::DType::bf16, q.data(), k.data(), v.data(), o.as<float>(),
                    lse.as<float>(), nullptr);
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  }

  static std::size_t bytes16(std::int64_t elements) {
    return static_cast<std::size_t>(elements) * 2;
  }
  static std::size_t bytes32(std::int64_t elements) {
    return static_cast<std::size_t>(elements) * 4;
  }

  void forward(cudaStream_t s) {
    kernels.forward(shape, mask, tk::DType::bf16, q.data(), k.data(), v.data(), o.as<float>(),
                    lse.as<float>(), s);
    tk::accumulate_partial_cuda(tk::output_rows(shape), o.as<float>(), lse.as<float>(),
                                acc_o.as<float>(), acc_lse.as<float>(), s);
  }
  void backward(cudaStream_t s) {
    kernels.backward(shape, mask, tk::DType::bf16, q.data(), k.data(), v.data(), o.as<float>(),
                     d_o.data(), lse.as<float>(), d_rowsum.as<float>(), dq.as<float>(),
                     dk.as<float>(), dv.as<float>(), s);
  }
};

// Seconds per call of `body` on `stream`, `calls` calls between two events.
template <typename Body>
double time_calls_s(const CudaStream& stream, int calls, Body body) {
  CudaEvent start, stop;
  cuda_check(cudaEventRecord(start.get(), stream.get()), "cudaEventRecord");
  for (int i = 0; i < calls; ++i) body(stream.get());
  cuda_check(cudaEventRecord(stop.get(), stream.get()), "cudaEventRecord");
  return elapsed_s(start, stop) / calls;
}

void nccl_exchange(const NcclComm& comm, tk::DeviceBuffer& buffer, int peer, bool send_first,
                   cudaStream_t stream) {
  const std::size_t count = buffer.bytes();
  auto send = [&] {
    nccl_check(ncclSend(buffer.data(), count, ncclInt8, peer, comm.get(), stream), "ncclSend");
  };
  auto recv = [&] {
    nccl_check(ncclRecv(buffer.data(), count, ncclInt8, peer, comm.get(), stream), "ncclRecv");
  };
  if (send_first) {
    send();
    recv();
  } else {
    recv();
    send();
  }
}

}  // namespace

std::vector<calibration::BlockTiming> time_cuda_block_kernels(const KernelBenchOptions& options,
                                                              tk::KernelFamily family) {
  std::vector<calibration::BlockTiming> grid = block_grid(options);
  tk::BlockKernels kernels(family);
  std::vector<std::unique_ptr<CudaBlockBench>> benches;
  for (const calibration::BlockTiming& t : grid) {
    benches.push_back(std::make_unique<CudaBlockBench>(
        options, t.head_dim, static_cast<std::int64_t>(t.tokens), t.causal, kernels));
  }
  CudaStream stream;
  keep_fastest_samples(grid, options, 0.001, [&](std::size_t i, int calls) {
    CudaBlockBench& bench = *benches[i];
    const bool fwd = grid[i].pass == Pass::fwd;
    return calls * time_calls_s(stream, calls, [&](cudaStream_t s) {
             fwd ? bench.forward(s) : bench.backward(s);
           });
  });
  return grid;
}

double time_cuda_launch_overhead_s() {
  constexpr int kLaunches = 1000;
  const tk::RowsShape rows{1, 1, 1, 64};
  tk::DeviceBuffer o(256), lse(4), acc_o(256), acc_lse(4);
  for (tk::DeviceBuffer* b : {&o, &lse, &acc_o, &acc_lse}) b->fill_zero();
  CudaStream stream;
  auto launch_all = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i) {
      tk::accumulate_partial_cuda(rows, o.as<float>(), lse.as<float>(), acc_o.as<float>(),
                                  acc_lse.as<float>(), stream.get());
    }
    cuda_check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kLaunches;
  };
  launch_all();  // warm up
  return std::min(launch_all(), launch_all());
}

double time_cuda_merge_bytes_per_s(const KernelBenchOptions& options) {
  const tk::RowsShape rows{options.batch, options.tokens.back(), options.heads,
                           options.head_dims.front()};
  const auto o_bytes = static_cast<std::size_t>(rows.o_elements()) * 4;
  const auto lse_bytes = static_cast<std::size_t>(rows.lse_elements()) * 4;
  tk::DeviceBuffer po(o_bytes), pl(lse_bytes), ao(o_bytes), al(lse_bytes);
  for (tk::DeviceBuffer* b : {&po, &pl, &ao, &al}) b->fill_zero();
  CudaStream stream;
  auto merge = [&](cudaStream_t s) {
    tk::accumulate_partial_cuda(rows, po.as<float>(), pl.as<float>(), ao.as<float>(),
                                al.as<float>(), s);
  };
  time_calls_s(stream, 3, merge);  // warm up
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < std::max(options.repeats, 3); ++i) {
    best = std::min(best, time_calls_s(stream, 10, merge));
  }
  return 3.0 * static_cast<double>(o_bytes + lse_bytes) / best;
}

std::vector<calibration::MessageTiming> time_nccl_ping_pong(const MpiSession& mpi,
                                                            const std::vector<double>& sizes_bytes,
                                                            int repeats) {
  std::vector<calibration::MessageTiming> out;
  const std::unique_ptr<NcclComm> comm = join_nccl(mpi);
  CudaStream stream;
  for (double bytes : sizes_bytes) {
    tk::DeviceBuffer buffer(static_cast<std::size_t>(bytes));
    buffer.fill_zero();
    std::vector<double> one_way;
    quiet_barrier(mpi);
    for (int i = 0; i < repeats + 1 && mpi.rank() < 2; ++i) {
      CudaEvent start, stop;
      cuda_check(cudaEventRecord(start.get(), stream.get()), "cudaEventRecord");
      nccl_exchange(*comm, buffer, 1 - mpi.rank(), mpi.rank() == 0, stream.get());
      cuda_check(cudaEventRecord(stop.get(), stream.get()), "cudaEventRecord");
      if (i > 0) one_way.push_back(elapsed_s(start, stop) / 2.0);  // the first warms up
    }
    if (mpi.rank() == 0) out.push_back({bytes, calibration::median(one_way)});
  }
  quiet_barrier(mpi);
  return out;
}

double measure_cuda_comm_slowdown(const MpiSession& mpi, const KernelBenchOptions& options,
                                  tk::KernelFamily family, std::int64_t tokens, double bytes) {
  constexpr int kCalls = 20;
  const std::unique_ptr<NcclComm> comm = join_nccl(mpi);
  CudaStream compute, comm_stream;
  tk::BlockKernels kernels(family);
  CudaBlockBench bench(options, options.head_dims.front(), tokens, false, kernels);
  tk::DeviceBuffer buffer(static_cast<std::size_t>(bytes));
  buffer.fill_zero();
  auto forward = [&](cudaStream_t s) { bench.forward(s); };
  quiet_barrier(mpi);
  double alone = 0.0, with = 0.0;
  if (mpi.rank() == 0) {
    time_calls_s(compute, 2, forward);  // warm up
    alone = time_calls_s(compute, kCalls, forward);
  }
  quiet_barrier(mpi);
  if (mpi.rank() < 2) {
    // Enough exchanges queued on the comm stream to cover the compute samples.
    const int exchanges = 50;
    for (int i = 0; i < exchanges; ++i) {
      nccl_exchange(*comm, buffer, 1 - mpi.rank(), mpi.rank() == 0, comm_stream.get());
    }
    if (mpi.rank() == 0) with = time_calls_s(compute, kCalls, forward);
    cuda_check(cudaStreamSynchronize(comm_stream.get()), "cudaStreamSynchronize");
  }
  quiet_barrier(mpi);
  return mpi.rank() == 0 && alone > 0.0 ? std::max(0.0, with / alone - 1.0) : 0.0;
}

}  // namespace tilesim::runtime
