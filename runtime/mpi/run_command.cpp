#include "runtime/mpi/run_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <utility>

#include "runtime/calibration/timing_gather.hpp"
#include "runtime/executor/measured_result.hpp"
#include "runtime/executor/output_digest.hpp"
#include "runtime/executor/owned_outputs.hpp"
#include "runtime/executor/rank_failure.hpp"
#include "runtime/mpi/backend_factory.hpp"
#include "runtime/mpi/check_report.hpp"
#include "runtime/mpi/mpi_session.hpp"
#include "runtime/mpi/start_gate.hpp"
#include "sim/core/atomic_file.hpp"
#include "sim/core/input_error.hpp"
#include "sim/model/chrome_trace.hpp"
#include "sim/model/result_json.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/validation/op_times_json.hpp"

namespace tilesim::runtime {
namespace {

constexpr int kOk = 0;
constexpr int kFailure = 1;
constexpr int kBadInput = 2;

// Gathered timings and stats -> one RankRun per rank.
std::vector<RankRun> unpack(std::vector<std::vector<OpTiming>> timings,
                            const std::vector<std::vector<double>>& stats) {
  std::vector<RankRun> runs(timings.size());
  for (std::size_t r = 0; r < runs.size(); ++r) {
    runs[r].timings = std::move(timings[r]);
    runs[r].peak_bytes = stats[r][0];
    runs[r].compute_flops = stats[r][1];
    runs[r].bytes_sent = stats[r][2];
    runs[r].bytes_received = stats[r][3];
  }
  return runs;
}

// The plan rank that the process of world rank `world_rank` runs: the rank the plan places on
// GPU `world_rank` (mpirun's processes in GPU order, one per GPU; Plan::placement, identity
// when empty).
int plan_rank_on(const Plan& plan, int world_rank) {
  if (plan.placement.empty()) return world_rank;
  const auto at = std::find(plan.placement.begin(), plan.placement.end(), world_rank);
  if (at == plan.placement.end()) {
    throw std::logic_error(fmt::format("the plan places no rank on GPU {}", world_rank));
  }
  return static_cast<int>(at - plan.placement.begin());
}

[[noreturn]] void fail_rank(const MpiSession& mpi, const Plan& plan, const RankFailure& e) {
  const std::string where =
      e.op() >= 0 ? plan.describe(OpId{e.rank(), e.op()}) : fmt::format("rank {}", e.rank());
  fmt::print(stderr, "tilesim run: rank {} failed at {}: {}\n", e.rank(), where, e.what());
  std::fflush(stderr);
  mpi.abort(kFailure);
}

void print_summary(const Plan& plan, const SimulationResult& result, const RunOptions& options) {
  const Figures f = summarize(result);
  fmt::print("{} on {} ranks, backend {}, kernels {}, {} tokens, {}\n", plan.schedule, plan.ranks,
             options.backend, options.kernels, plan.shape.seq_len,
             plan.shape.causal ? "causal" : "non-causal");
  fmt::print("  makespan          {:.6f} s (measured)\n", f.makespan_s);
  fmt::print("  compute per rank  {:.6f} s (max)   balance max/mean {:.3f}\n", f.compute_s_max,
             f.compute_balance);
  fmt::print("  exposed comm      {:.6f} s (max)   overlap {:.1f}%\n", f.exposed_comm_s_max,
             100.0 * f.overlap);
  fmt::print("  bytes             {:.0f} in total (plan sizes)\n", f.comm_bytes_total);
  if (!plan.placement.empty()) {
    fmt::print("  placement         plan rank r on MPI rank (GPU) placement[r]: {}\n",
               fmt::join(plan.placement, " "));
  }
}

int run_on_ranks(MpiSession& mpi, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  Plan plan;
  Scenario scenario;
  try {
    const PreparedScenario prepared = prepare_scenario(options.scenario, options.sets);
    scenario = prepared.scenario;
    reject_job(scenario, "run");
    plan = build_valid_plan(scenario);
  } catch (const InputError& e) {
    if (mpi.rank() == 0) fmt::print(stderr, "error: {}\n", e.what());
    return kBadInput;
  }
  if (mpi.size() != plan.ranks) {
    if (mpi.rank() == 0) {
      fmt::print(stderr,
                 "error: {}: schedule.gpus is {} but this job has {} MPI rank(s); "
                 "launch with mpirun -np {}\n",
                 options.scenario, plan.ranks, mpi.size(), plan.ranks);
    }
    return kBadInput;
  }
  // From here on mpi.rank() is this process's plan rank, and MPI rank 0 of the messages below
  // is plan rank 0's process.
  mpi.order_ranks(plan_rank_on(plan, mpi.world_rank()));
  InputData inputs(plan, options.seed, backend_precision(options.backend));
  if (options.fail.mode == FailureInjection::Mode::nan && options.fail.rank == mpi.rank()) {
    for (int obj = 0; obj < static_cast<int>(plan.objects.size()); ++obj) {
      if (plan.object(obj).input && plan.object(obj).home_rank == mpi.rank()) {
        inputs.poison(obj);
        break;
      }
    }
  }
  std::unique_ptr<Backend> backend;
  std::string why;
  try {
    backend = make_backend(options.backend, options.kernels, plan, inputs, mpi, options.threads);
  } catch (const BackendUnavailable& e) {
    why = e.what();
  }
  if (!mpi.all_true(backend != nullptr)) {
    if (!why.empty()) fmt::print(stderr, "tilesim run: rank {}: {}\n", mpi.rank(), why);
    return kFailure;
  }
  ExecutorOptions exec_options{options.timeout, options.fail};
  Executor executor(plan, mpi.rank(), *backend, exec_options);
  const StartGate gate(mpi);
  RankRun run;
  try {
    executor.prepare();
    gate.pass();
    run = executor.run();
  } catch (const RankFailure& e) {
    fail_rank(mpi, plan, e);
  } catch (const std::exception& e) {
    fail_rank(mpi, plan, RankFailure(mpi.rank(), -1, e.what()));
  }
  // Outputs owned here: digest and (optionally) check.
  OutputDigest digest(plan);
  OutputChecks own;
  try {
    own = digest_and_check_outputs(plan, mpi.rank(), *backend, inputs, options.check, digest);
  } catch (const std::exception& e) {
    fail_rank(mpi, plan, RankFailure(mpi.rank(), -1, std::string("output check: ") + e.what()));
  }
  run.timings.resize(plan.programs[static_cast<std::size_t>(mpi.rank())].size());
  auto timings = gather_timings(mpi, run.timings);
  const auto stats = mpi.gather(
      std::vector<double>{run.peak_bytes, run.compute_flops, run.bytes_sent, run.bytes_received});
  const auto checks = mpi.gather(CheckReport::pack(own));
  const auto digests = mpi.gather(digest.values());
  const auto world_ranks = mpi.gather(std::vector<std::int64_t>{mpi.world_rank()});
  int code = kOk;
  if (mpi.rank() == 0) {
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const SimulationResult result =
        measured_result(plan, unpack(std::move(timings), stats), wall_s);
    const CheckReport report(options.backend, checks);
    if (options.check && !report.passed()) code = kFailure;
    const std::string checksum = OutputDigest::combine(digests);
    if (!options.trace.empty()) {
      try {
        AtomicFile out(options.trace, "--trace");
        write_chrome_trace(out.stream(), plan, result, plan.placement, nullptr);
        out.commit();
      } catch (const InputError& e) {
        fmt::print(stderr, "error: {}\n", e.what());
        code = kBadInput;
      }
    }
    if (options.json) {
      nlohmann::ordered_json j = result_to_json(
          plan, result,
          ResultContext{scenario.name, scenario.topology_path, scenario.calibration_path, true});
      j["backend"] = options.backend;
      j["kernels"] = options.kernels;
      j["seed"] = options.seed;
      j["output_checksum"] = checksum;
      // The process (and so the GPU) each plan rank ran on, as the run saw it.
      nlohmann::ordered_json& ran_on = j["mpi_rank_of_plan_rank"] = nlohmann::ordered_json::array();
      for (const std::vector<std::int64_t>& w : world_ranks) ran_on.push_back(w.front());
      j["op_times"] = validation::op_times_to_json(plan, result);  // for tilesim validate
      if (options.check) j["check"] = report.json();
      fmt::print("{}\n", j.dump(2));
    } else {
      print_summary(plan, result, options);
      fmt::print("  output checksum   {}\n", checksum);
      if (options.check) report.print();
    }
    if (options.check && !report.passed()) report.print_failure();
    std::fflush(stdout);
  }
  return mpi.broadcast(code);
}

}  // namespace

bool runtime_available() { return true; }

int run_command(const RunOptions& options) {
  MpiSession mpi;
  return run_on_ranks(mpi, options);
}

}  // namespace tilesim::runtime
