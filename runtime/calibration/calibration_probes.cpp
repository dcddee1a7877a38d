#include "runtime/calibration/calibration_probes.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string>

#include "runtime/calibration/timing_gather.hpp"
#include "runtime/executor/executor.hpp"
#include "runtime/executor/input_data.hpp"
#include "runtime/mpi/start_gate.hpp"
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

std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::vector<calibration::MeasuredRun> run_probes(const MpiSession& mpi,
                                                 const KernelBenchOptions& options,
                                                 const std::vector<std::int64_t>& chunk_tokens,
                                                 int repeats, InputPrecision precision,
                                                 const ProbeBackendFactory& backend) {
  std::vector<calibration::MeasuredRun> out;
  const StartGate gate(mpi);
  for (std::int64_t chunk : chunk_tokens) {
    calibration::MeasuredRun best;
    best.plan = make_ring_plan(probe_shape(options, chunk, mpi.size()), mpi.size());
    Picoseconds best_ps = std::numeric_limits<Picoseconds>::max();
    for (int k = 0; k < repeats; ++k) {
      const InputData inputs(best.plan, 1, precision);
      std::vector<OpTiming> mine;
      std::int64_t clock_start_ns = 0;
      {
        const std::unique_ptr<Backend> b = backend(best.plan, inputs);
        Executor executor(best.plan, mpi.rank(), *b, ExecutorOptions{});
        executor.prepare();
        gate.pass();
        clock_start_ns = steady_now_ns();  // the executor starts its clock first thing in run()
        mine = executor.run().timings;
      }
      mine.resize(best.plan.programs[static_cast<std::size_t>(mpi.rank())].size());
      auto all = gather_timings(mpi, mine);
      const auto starts = mpi.gather(std::vector<std::int64_t>{clock_start_ns});
      if (mpi.rank() != 0) continue;
      if (gate.one_host()) {
        std::vector<Picoseconds> start_ps;  // after rank 0's start (ns since boot overflow ps)
        for (const auto& s : starts) start_ps.push_back((s.at(0) - starts[0].at(0)) * 1000);
        calibration::shift_to_one_clock(all, start_ps);
      }
      if (makespan_ps(all) < best_ps) {
        best_ps = makespan_ps(all);
        best.ops = std::move(all);
      }
    }
    out.push_back(std::move(best));
  }
  return out;
}

}  // namespace tilesim::runtime
