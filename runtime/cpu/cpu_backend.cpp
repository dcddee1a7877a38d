#include "runtime/cpu/cpu_backend.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "kernels/cpu/attention_cpu.hpp"
#include "runtime/cpu/cpu_block_ops.hpp"
#include "runtime/executor/object_layout.hpp"
#include "runtime/executor/rank_failure.hpp"
#include "runtime/mpi/mpi_session.hpp"

namespace tilesim::runtime {

CpuBackend::CpuBackend(const Plan& plan, int rank, const InputData& inputs, MPI_Comm comm,
                       int threads)
    : plan_(plan),
      rank_(rank),
      inputs_(inputs),
      comm_(comm),
      threads_(threads),
      objects_(plan.objects.size()),
      timings_(plan.programs.at(static_cast<std::size_t>(rank)).size()),
      scratch_(plan) {
  void* value = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &value, &flag);
  if (flag != 0 && value != nullptr) tag_limit_ = *static_cast<int*>(value);
}

CpuBackend::~CpuBackend() {
  // Only reached on the normal path (failures abort the job): every request has completed.
  for (Request& r : requests_) {
    if (r.request != MPI_REQUEST_NULL) MPI_Request_free(&r.request);
  }
}

void CpuBackend::start_clock() { epoch_ = Clock::now(); }

Picoseconds CpuBackend::since_start(Clock::time_point t) const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - epoch_).count() * 1000;
}

std::span<float> CpuBackend::data(int object) {
  return objects_.at(static_cast<std::size_t>(object));
}

void CpuBackend::allocate(int object, ObjectFill fill) {
  std::vector<float>& buffer = objects_.at(static_cast<std::size_t>(object));
  const ObjectExtent extent = object_extent(plan_, object);
  buffer.assign(static_cast<std::size_t>(extent.elements()), 0.0F);
  if (fill == ObjectFill::input) {
    inputs_.fill(object, buffer);
  } else if (fill == ObjectFill::accumulator && plan_.object(object).tensor == Tensor::lse) {
    std::fill(buffer.begin(), buffer.end(), -std::numeric_limits<float>::infinity());
  }
}

void CpuBackend::release(int object) {
  std::vector<float>().swap(objects_.at(static_cast<std::size_t>(object)));
}

void CpuBackend::launch_compute(const ComputeTask& task, std::span<const int> /*pending*/) {
  // Spans are resolved here, on the main thread; the hazards keep them alive and unshared.
  if (task.pass == Pass::fwd) {
    std::vector<std::pair<ChunkPair, ForwardSpans>> work;
    for (const ComputePair& p : task.pairs) {
      work.push_back(
          {{p.q_chunk, p.kv_chunk}, ForwardSpans{data(p.q), data(p.kv), data(p.o), data(p.lse)}});
    }
    worker_.submit(task.op, [this, work = std::move(work)] {
      for (const auto& [bp, spans] : work) {
        run_forward_blocks(plan_, bp.q_chunk, bp.kv_chunk, spans, scratch_, threads_);
      }
    });
    return;
  }
  std::vector<std::pair<ChunkPair, BackwardSpans>> work;
  for (const ComputePair& p : task.pairs) {
    work.push_back({{p.q_chunk, p.kv_chunk},
                    BackwardSpans{data(p.q), data(p.kv), data(p.o), data(p.lse), data(p.d_o),
                                  data(p.dq), data(p.dkv)}});
  }
  worker_.submit(task.op, [this, work = std::move(work)] {
    for (const auto& [bp, spans] : work) {
      run_backward_blocks(plan_, bp.q_chunk, bp.kv_chunk, spans, threads_);
    }
  });
}

void CpuBackend::launch_merge(const MergeTask& task, std::span<const int> /*pending*/) {
  struct Sum {
    std::vector<std::span<const float>> addends;
    std::span<float> target;
  };
  struct Softmax {
    std::vector<std::pair<std::span<const float>, std::span<const float>>> parts;
    std::span<float> o, lse;
  };
  std::vector<Sum> sums;
  for (const SumMerge& m : task.sums) {
    Sum sum{{}, data(m.target)};
    for (int obj : m.addends) sum.addends.emplace_back(data(obj));
    sums.push_back(std::move(sum));
  }
  std::vector<Softmax> softmax;
  for (const SoftmaxMerge& m : task.softmax) {
    Softmax merge{{}, data(m.target.o), data(m.target.lse)};
    for (const PartialPair& p : m.partials) merge.parts.emplace_back(data(p.o), data(p.lse));
    softmax.push_back(std::move(merge));
  }
  worker_.submit(
      task.op, [this, sums = std::move(sums), softmax = std::move(softmax), op = task.op] {
        for (const Sum& sum : sums) {
          for (std::span<const float> part : sum.addends) {
            if (part.size() != sum.target.size()) {
              throw std::runtime_error(
                  fmt::format("merge op {}: partial and target cover different chunks", op));
            }
            for (std::size_t i = 0; i < sum.target.size(); ++i) sum.target[i] += part[i];
          }
        }
        const kernels::RowsShape rows = block_rows(plan_);
        const auto o_size = static_cast<std::size_t>(rows.o_elements());
        const auto lse_size = static_cast<std::size_t>(rows.lse_elements());
        for (const Softmax& m : softmax) {
          const std::size_t blocks = m.o.size() / o_size;
          for (const auto& [po, pl] : m.parts) {
            if (po.size() != m.o.size() || pl.size() != m.lse.size()) {
              throw std::runtime_error(
                  fmt::format("merge op {}: partial and target cover different chunks", op));
            }
            for (std::size_t k = 0; k < blocks; ++k) {
              kernels::accumulate_partial_cpu(
                  rows, po.subspan(k * o_size, o_size), pl.subspan(k * lse_size, lse_size),
                  m.o.subspan(k * o_size, o_size), m.lse.subspan(k * lse_size, lse_size));
            }
          }
        }
      });
}

void CpuBackend::post_group(std::span<const CommTask> tasks, std::span<const int> /*pending*/) {
  const Picoseconds now = since_start(Clock::now());
  for (const CommTask& t : tasks) {
    std::span<float> buffer = data(t.object);
    if (t.tag > tag_limit_ ||
        buffer.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
      throw RankFailure(rank_, t.op, "message tag or size exceeds what MPI can address");
    }
    Request r{t.op, t.object, t.kind == OpKind::recv, MPI_REQUEST_NULL};
    const int count = static_cast<int>(buffer.size());
    const int rc =
        r.recv ? MPI_Irecv(buffer.data(), count, MPI_FLOAT, t.peer, t.tag, comm_, &r.request)
               : MPI_Isend(buffer.data(), count, MPI_FLOAT, t.peer, t.tag, comm_, &r.request);
    try {
      mpi_check(rc, r.recv ? "MPI_Irecv" : "MPI_Isend");
    } catch (const std::exception& e) {
      throw RankFailure(rank_, t.op, e.what());
    }
    timings_[static_cast<std::size_t>(t.op)].start_ps = now;
    requests_.push_back(r);
  }
}

void CpuBackend::poll(std::vector<int>& finished) {
  std::vector<ComputeWorker::Finished> done;
  std::optional<ComputeWorker::Error> error;
  worker_.take_finished(done, error);
  if (error) throw RankFailure(rank_, error->op, "kernel error: " + error->message);
  for (const ComputeWorker::Finished& f : done) {
    timings_[static_cast<std::size_t>(f.op)] = OpTiming{since_start(f.start), since_start(f.end)};
    finished.push_back(f.op);
    idle_streak_ = 0;
  }
  for (auto it = requests_.begin(); it != requests_.end();) {
    int flag = 0;
    MPI_Status status;
    try {
      mpi_check(MPI_Test(&it->request, &flag, &status), "MPI_Test");
      if (flag != 0 && it->recv) {
        int count = 0;
        mpi_check(MPI_Get_count(&status, MPI_FLOAT, &count), "MPI_Get_count");
        if (static_cast<std::size_t>(count) !=
            objects_[static_cast<std::size_t>(it->object)].size()) {
          throw std::runtime_error(
              fmt::format("received {} values, expected {}", count,
                          objects_[static_cast<std::size_t>(it->object)].size()));
        }
      }
    } catch (const std::exception& e) {
      throw RankFailure(rank_, it->op, e.what());
    }
    if (flag == 0) {
      ++it;
      continue;
    }
    timings_[static_cast<std::size_t>(it->op)].end_ps = since_start(Clock::now());
    finished.push_back(it->op);
    idle_streak_ = 0;
    it = requests_.erase(it);
  }
}

// Sleeps until the compute worker finishes a task, or at most a backoff from 20 us to
// 640 us while nothing finishes, for MPI progress: a tight polling loop takes CPU time
// from the compute thread (measured: a 2K-token block ran 1.4x slower with a fixed 20 us
// poll), while a long fixed sleep would delay MPI progress. A compute completion wakes
// the loop at once, so the next op is issued without waiting out the backoff.
void CpuBackend::idle() {
  const int shift = std::min(idle_streak_, 5);
  ++idle_streak_;
  worker_.wait_for_finished(std::chrono::microseconds(20 << shift));
}

std::vector<OpTiming> CpuBackend::timings() { return timings_; }

std::vector<float> CpuBackend::read_object(int object) {
  return objects_.at(static_cast<std::size_t>(object));
}

}  // namespace tilesim::runtime
