#include "runtime/cuda/cuda_backend.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <thread>

#include "kernels/cuda/attention_cuda.hpp"
#include "runtime/cuda/cuda_rank_setup.hpp"
#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/rank_failure.hpp"
#include "runtime/mpi/backend_factory.hpp"

namespace tilesim::runtime {
namespace {

// Whether this rank can use a GPU; `why` says why not. cuDNN takes more head dims than the own
// kernels; a block that falls back to the own kernels then fails naming its op.
bool pick_device(const Plan& plan, const MpiSession& mpi, kernels::KernelFamily family,
                 std::string& why) {
  const std::int64_t d = plan.shape.head_dim;
  // Both CUDA paths (own WMMA kernels and the cuDNN graph of cudnn_attention.cpp) are built
  // for one head dim shared by Q, K and V; MLA shapes run on the CPU backend.
  if (plan.shape.value_dim() != d) {
    why = fmt::format(
        "the CUDA kernels (own and cuDNN) need v_head_dim = head_dim; v_head_dim {} with "
        "head_dim {} runs on the CPU backend (--backend cpu)",
        plan.shape.value_dim(), d);
    return false;
  }
  if (family == kernels::KernelFamily::cudnn && (d % 8 != 0 || d > 256)) {
    why = fmt::format("cuDNN fused attention takes head_dim a multiple of 8 up to 256, not {}", d);
    return false;
  }
  if (family == kernels::KernelFamily::own && !kernels::attention_cuda_supports_head_dim(d)) {
    why = fmt::format("the CUDA kernels support head_dim 64 and 128, not {}", plan.shape.head_dim);
    return false;
  }
  return select_local_gpu(mpi, why);
}

}  // namespace

bool CudaBackend::stored_as_bf16(Tensor tensor) {
  return tensor == Tensor::q || tensor == Tensor::kv || tensor == Tensor::d_o;
}

CudaBackend::CudaBackend(const Plan& plan, const MpiSession& mpi, const InputData& inputs,
                         kernels::KernelFamily family)
    : plan_(plan), rank_(mpi.rank()), inputs_(inputs) {
  std::string why;
  const bool usable = pick_device(plan, mpi, family, why);
  if (!mpi.all_true(usable)) {
    throw BackendUnavailable(usable ? "cuda backend: another rank has no usable GPU"
                                    : "cuda backend: no usable GPU: " + why);
  }
  kernels_ = std::make_unique<kernels::BlockKernels>(family);
  compute_ = std::make_unique<CudaStream>();
  comm_ = std::make_unique<CudaStream>();
  epoch_ = std::make_unique<CudaEvent>();
  nccl_ = join_nccl(mpi);
  objects_.resize(plan.objects.size());
  const kernels::RowsShape rows = block_rows(plan);
  scratch_o_ = kernels::DeviceBuffer(static_cast<std::size_t>(rows.o_elements()) * sizeof(float));
  scratch_lse_ =
      kernels::DeviceBuffer(static_cast<std::size_t>(rows.lse_elements()) * sizeof(float));
  const std::size_t ops = plan.programs.at(static_cast<std::size_t>(rank_)).size();
  event_of_op_.assign(ops, -1);
  on_comm_.assign(ops, false);
}

CudaBackend::~CudaBackend() {
  if (compute_) cudaStreamSynchronize(compute_->get());
  if (comm_) cudaStreamSynchronize(comm_->get());
  if (kernels_) {
    for (const auto& [why, blocks] : kernels_->fallbacks()) {
      fmt::print(stderr, "cuda backend: rank {}: {} block(s) ran on the own kernels: {}\n", rank_,
                 blocks, why);
    }
  }
}

void CudaBackend::start_clock() {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  cuda_check(cudaEventRecord(epoch_->get(), compute_->get()), "cudaEventRecord");
}

std::byte* CudaBackend::bytes_of(int object) const {
  return objects_.at(static_cast<std::size_t>(object)).as<std::byte>();
}

float* CudaBackend::floats_of(int object) const {
  return objects_.at(static_cast<std::size_t>(object)).as<float>();
}

void CudaBackend::allocate(int object, ObjectFill fill) {
  const Tensor tensor = plan_.object(object).tensor;
  const auto n = static_cast<std::size_t>(object_extent(plan_, object).elements());
  const bool half = stored_as_bf16(tensor);
  kernels::DeviceBuffer buffer(n * (half ? 2 : sizeof(float)));
  if (fill == ObjectFill::input) {
    std::vector<float> host(n);
    inputs_.fill(object, host);
    if (half) {
      kernels::DeviceBuffer staging(n * sizeof(float));
      staging.upload(host.data(), n * sizeof(float));
      kernels::convert_from_f32_cuda(staging.as<float>(), buffer.data(),
                                     static_cast<std::int64_t>(n), kernels::DType::bf16,
                                     compute_->get());
      cuda_check(cudaStreamSynchronize(compute_->get()), "cudaStreamSynchronize");
    } else {  // the saved O, LSE of a backward-only plan stay fp32
      buffer.upload(host.data(), n * sizeof(float));
    }
  } else if (fill == ObjectFill::accumulator) {
    const float value = tensor == Tensor::lse ? -std::numeric_limits<float>::infinity() : 0.0F;
    const std::vector<float> host(n, value);
    buffer.upload(host.data(), n * sizeof(float));
  }
  objects_.at(static_cast<std::size_t>(object)) = std::move(buffer);
}

void CudaBackend::release(int object) {
  objects_.at(static_cast<std::size_t>(object)) = kernels::DeviceBuffer();
}

int CudaBackend::new_events() {
  events_.push_back(EventPair{});
  return static_cast<int>(events_.size()) - 1;
}

void CudaBackend::wait_for(cudaStream_t stream, std::span<const int> pending, bool comm_stream) {
  for (int p : pending) {
    const int e = event_of_op_.at(static_cast<std::size_t>(p));
    if (e < 0 || on_comm_[static_cast<std::size_t>(p)] == comm_stream) continue;
    cuda_check(cudaStreamWaitEvent(stream, events_[static_cast<std::size_t>(e)].end.get(), 0),
               "cudaStreamWaitEvent");
  }
}

int CudaBackend::begin_timed(cudaStream_t stream, std::span<const int> pending, bool comm_stream) {
  wait_for(stream, pending, comm_stream);
  const int e = new_events();
  cuda_check(cudaEventRecord(events_[static_cast<std::size_t>(e)].start.get(), stream),
             "cudaEventRecord");
  return e;
}

void CudaBackend::end_timed(cudaStream_t stream, int events, std::span<const int> ops,
                            bool comm_stream) {
  cuda_check(cudaEventRecord(events_[static_cast<std::size_t>(events)].end.get(), stream),
             "cudaEventRecord");
  for (int op : ops) {
    event_of_op_[static_cast<std::size_t>(op)] = events;
    on_comm_[static_cast<std::size_t>(op)] = comm_stream;
    in_flight_.push_back(op);
  }
}

void CudaBackend::launch_compute(const ComputeTask& task, std::span<const int> pending) {
  if (task.pass != Pass::fwd) {
    throw RankFailure(rank_, task.op, "the cuda backend runs forward compute ops only");
  }
  try {
    cudaStream_t s = compute_->get();
    const int e = begin_timed(s, pending, false);
    const kernels::BlockShape shape = block_shape(plan_);
    const kernels::RowsShape rows = block_rows(plan_);
    const auto q_size = static_cast<std::size_t>(block_elements(plan_, Tensor::q));
    const auto kv_size = static_cast<std::size_t>(block_elements(plan_, Tensor::kv));
    const auto lse_size = static_cast<std::size_t>(block_elements(plan_, Tensor::lse));
    for (const ComputePair& pair : task.pairs) {
      const auto& q_blocks = plan_.chunks.at(static_cast<std::size_t>(pair.q_chunk)).blocks;
      const auto& kv_blocks = plan_.chunks.at(static_cast<std::size_t>(pair.kv_chunk)).blocks;
      for (std::size_t a = 0; a < q_blocks.size(); ++a) {
        for (std::size_t b = 0; b < kv_blocks.size(); ++b) {
          if (plan_.layout.mask(q_blocks[a], kv_blocks[b], plan_.shape.mask) ==
              BlockPairMask::skip) {
            continue;
          }
          const std::byte* kv = bytes_of(pair.kv) + b * kv_size * 2;
          kernels_->forward(shape, kernel_mask(plan_, q_blocks[a], kv_blocks[b]),
                            kernels::DType::bf16, bytes_of(pair.q) + a * q_size * 2, kv,
                            kv + kv_size, scratch_o_.as<float>(), scratch_lse_.as<float>(), s);
          kernels::accumulate_partial_cuda(rows, scratch_o_.as<float>(), scratch_lse_.as<float>(),
                                           floats_of(pair.o) + a * q_size,
                                           floats_of(pair.lse) + a * lse_size, s);
        }
      }
    }
    const int ops[] = {task.op};
    end_timed(s, e, ops, false);
  } catch (const std::exception& ex) {
    throw RankFailure(rank_, task.op, std::string("kernel launch: ") + ex.what());
  }
}

void CudaBackend::launch_merge(const MergeTask& task, std::span<const int> pending) {
  try {
    cudaStream_t s = compute_->get();
    const int e = begin_timed(s, pending, false);
    const kernels::RowsShape rows = block_rows(plan_);
    for (const SumMerge& m : task.sums) {
      const std::int64_t n = object_extent(plan_, m.target).elements();
      for (int part : m.addends) {
        if (object_extent(plan_, part).elements() != n) {
          throw std::runtime_error("partial and target cover different chunks");
        }
        kernels::add_f32_cuda(floats_of(part), floats_of(m.target), n, s);
      }
    }
    const auto o_size = static_cast<std::size_t>(rows.o_elements());
    const auto lse_size = static_cast<std::size_t>(rows.lse_elements());
    for (const SoftmaxMerge& m : task.softmax) {
      const auto blocks = static_cast<std::size_t>(object_extent(plan_, m.target.o).blocks);
      for (const PartialPair& p : m.partials) {
        if (object_extent(plan_, p.o).blocks != static_cast<int>(blocks)) {
          throw std::runtime_error("partial and target cover different chunks");
        }
        for (std::size_t k = 0; k < blocks; ++k) {
          kernels::accumulate_partial_cuda(
              rows, floats_of(p.o) + k * o_size, floats_of(p.lse) + k * lse_size,
              floats_of(m.target.o) + k * o_size, floats_of(m.target.lse) + k * lse_size, s);
        }
      }
    }
    const int ops[] = {task.op};
    end_timed(s, e, ops, false);
  } catch (const std::exception& ex) {
    throw RankFailure(rank_, task.op, std::string("merge launch: ") + ex.what());
  }
}

void CudaBackend::post_group(std::span<const CommTask> tasks, std::span<const int> pending) {
  if (tasks.empty()) return;
  try {
    cudaStream_t s = comm_->get();
    const int e = begin_timed(s, pending, true);
    nccl_check(ncclGroupStart(), "ncclGroupStart");
    for (const CommTask& t : tasks) {
      const std::size_t bytes = objects_.at(static_cast<std::size_t>(t.object)).bytes();
      if (t.kind == OpKind::send) {
        nccl_check(ncclSend(bytes_of(t.object), bytes, ncclUint8, t.peer, nccl_->get(), s),
                   "ncclSend");
      } else {
        nccl_check(ncclRecv(bytes_of(t.object), bytes, ncclUint8, t.peer, nccl_->get(), s),
                   "ncclRecv");
      }
    }
    nccl_check(ncclGroupEnd(), "ncclGroupEnd");
    std::vector<int> ops;
    for (const CommTask& t : tasks) ops.push_back(t.op);
    end_timed(s, e, ops, true);
  } catch (const std::exception& ex) {
    throw RankFailure(rank_, tasks.front().op, std::string("NCCL group: ") + ex.what());
  }
}

void CudaBackend::poll(std::vector<int>& finished) {
  ncclResult_t async = ncclSuccess;
  if (ncclCommGetAsyncError(nccl_->get(), &async) == ncclSuccess && async != ncclSuccess &&
      async != ncclInProgress) {
    nccl_->abort();
    int op = -1;
    for (int f : in_flight_) {
      if (on_comm_[static_cast<std::size_t>(f)]) {
        op = f;
        break;
      }
    }
    throw RankFailure(rank_, op,
                      std::string("NCCL asynchronous error: ") + ncclGetErrorString(async));
  }
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    const int e = event_of_op_[static_cast<std::size_t>(*it)];
    const cudaError_t status = cudaEventQuery(events_[static_cast<std::size_t>(e)].end.get());
    if (status == cudaErrorNotReady) {
      ++it;
      continue;
    }
    if (status != cudaSuccess) {
      throw RankFailure(rank_, *it, std::string("CUDA error: ") + cudaGetErrorString(status));
    }
    finished.push_back(*it);
    it = in_flight_.erase(it);
  }
}

void CudaBackend::idle() { std::this_thread::sleep_for(std::chrono::microseconds(20)); }

std::vector<OpTiming> CudaBackend::timings() {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::vector<OpTiming> out(event_of_op_.size());
  auto ps = [&](cudaEvent_t event) {
    float ms = 0.0F;
    cuda_check(cudaEventElapsedTime(&ms, epoch_->get(), event), "cudaEventElapsedTime");
    return static_cast<Picoseconds>(std::llround(static_cast<double>(ms) * 1e9));
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int e = event_of_op_[i];
    if (e < 0) continue;
    out[i] = OpTiming{ps(events_[static_cast<std::size_t>(e)].start.get()),
                      ps(events_[static_cast<std::size_t>(e)].end.get())};
  }
  return out;
}

std::vector<float> CudaBackend::read_object(int object) {
  cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  const auto n = static_cast<std::size_t>(object_extent(plan_, object).elements());
  std::vector<float> host(n);
  if (stored_as_bf16(plan_.object(object).tensor)) {
    kernels::DeviceBuffer staging(n * sizeof(float));
    kernels::convert_to_f32_cuda(bytes_of(object), staging.as<float>(),
                                 static_cast<std::int64_t>(n), kernels::DType::bf16,
                                 compute_->get());
    cuda_check(cudaStreamSynchronize(compute_->get()), "cudaStreamSynchronize");
    staging.download(host.data(), n * sizeof(float));
  } else {
    objects_.at(static_cast<std::size_t>(object)).download(host.data(), n * sizeof(float));
  }
  return host;
}

}  // namespace tilesim::runtime
