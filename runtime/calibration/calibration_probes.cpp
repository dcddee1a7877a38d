#include "runtime/calibration/calibration_probes.hpp"

#include <algorithm>
#include <limits>

#include "runtime/calibration/timing_gather.hpp"
#include "runtime/executor/executor.hpp"
#include "runtime/executor/input_data.hpp"
#include "sim/schedules/ring_schedule.hpp"

namespace tilesim::runtime {
namespace {

AttentionShape probe_shape(const KernelBenchOptions& options, std::int64_t chunk, int ranks) {
  AttentionShape shape;
  shape.seq_len = chunk * ranks;
  shape.batch = options.batch;
  shape.heads = options.heads;
  shape.kv_heads = options.kv_heads;
  shape.head_dim = options.head_dims.front();
  shape.dtype = DType::fp32;
  shape.set_causal(false);
  shape.pass = PassSelection::forward;
  return shape;
}

Picoseconds makespan_ps(const std::vector<std::vector<OpTiming>>& ops) {
  Picoseconds end = 0;
  for (const auto& rank : ops) {
    for (const OpTiming& t : rank) end = std::max(end, t.end_ps);
  }
  return end;
}

}  // namespace

std::vector<calibration::MeasuredRun> run_probes(const MpiSession& mpi,
                                                 const KernelBenchOptions& options,
                                                 const std::vector<std::int64_t>& chunk_tokens,
                                                 int repeats, InputPrecision precision,
                                                 const ProbeBackendFactory& backend) {
  std::vector<calibration::MeasuredRun> out;
  for (std::int64_t chunk : chunk_tokens) {
    calibration::MeasuredRun best;
    best.plan = make_ring_plan(probe_shape(options, chunk, mpi.size()), mpi.size());
    Picoseconds best_ps = std::numeric_limits<Picoseconds>::max();
    for (int k = 0; k < repeats; ++k) {
      const InputData inputs(best.plan, 1, precision);
      std::vector<OpTiming> mine;
      {
        const std::unique_ptr<Backend> b = backend(best.plan, inputs);
        Executor executor(best.plan, mpi.rank(), *b, ExecutorOptions{});
        executor.prepare();
        mpi.barrier();
        mine = executor.run().timings;
      }
      mine.resize(best.plan.programs[static_cast<std::size_t>(mpi.rank())].size());
      auto all = gather_timings(mpi, mine);
      if (mpi.rank() == 0 && makespan_ps(all) < best_ps) {
        best_ps = makespan_ps(all);
        best.ops = std::move(all);
      }
    }
    out.push_back(std::move(best));
  }
  return out;
}

}  // namespace tilesim::runtime
