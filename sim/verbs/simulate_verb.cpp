#include "sim/verbs/simulate_verb.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "sim/core/units.hpp"
#include "sim/job/job_json.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/validation/op_times_json.hpp"

namespace tilesim {
namespace {

constexpr std::size_t kMostLoadedLinks = 8;

}  // namespace

const Plan& SimulationRun::full_plan() const {
  if (symmetric()) {
    throw std::logic_error(
        "SimulationRun::full_plan: the symmetric path builds only the quotient plan of one rank "
        "per class (quotient_plan())");
  }
  if (lazy) {
    throw std::logic_error(
        "SimulationRun::full_plan: a lazy run dropped every op once it finished (lazy_plan.hpp)");
  }
  return simulated_group_plan;
}

const Plan& SimulationRun::quotient_plan() const {
  if (!symmetric()) throw std::logic_error("SimulationRun::quotient_plan: not a symmetric run");
  return simulated_group_plan;
}

std::size_t SimulationRun::full_plan_ops() const {
  if (!symmetric()) return simulated_group_plan.op_count();
  return full_ring_ops(simulated_group_plan, *symmetry);
}

namespace {

// A trace, op records or the validator's dry run: the whole plan of every rank.
bool needs_every_op(const SimulateRequest& request) {
  return request.trace || request.records || request.per_op || request.full_check;
}

// The simulation of run.prepared's CP group (or job) into run; see run_simulation.
void simulate_prepared(SimulationRun& run, const SimulateRequest& request) {
  const PreparedScenario& p = run.prepared;
  if (request.job_refused_by != nullptr) reject_job(p.scenario, request.job_refused_by);
  // One rank per class where that is exact (or a role quotient, asked for: approximate); a
  // trace, op records or the validator's dry run need every rank's ops, and then the full plan
  // must pass the guard prepare_scenario sized by the classes.
  const bool every_rank = needs_every_op(request);
  if (!every_rank) {
    run.symmetry = p.symmetry;
  } else if (p.symmetry && p.symmetry->exact()) {
    check_plan_resources(p.scenario);
  }
  // A plan that ran windowed keeps the digest its source took and what is left of its programs.
  const auto keep_windowed = [&](ProgramSource& source) {
    run.windowed_digest = source.whole_plan_digest();
    run.simulated_group_plan = std::move(source.plan());
    check_memory_budget(p.scenario, summarize(run.result).peak_memory_bytes_max);
  };
  if (run.symmetric()) {
    // The ring family's and USP's forward quotients are generated as they run (O(K x window)
    // ops held); the mesh's, the double ring's and the backwards are built whole.
    if (const std::unique_ptr<ProgramSource> source = symmetric_source(p.scenario, *run.symmetry)) {
      run.result = simulate_classes_windowed(*source, *run.symmetry, p.topology, p.profile);
      keep_windowed(*source);
      return;
    }
    run.simulated_group_plan = build_symmetric_plan(p.scenario, *run.symmetry);
    run.result = simulate_classes(run.simulated_group_plan, *run.symmetry, p.topology, p.profile);
    check_memory_budget(p.scenario, summarize(run.result).peak_memory_bytes_max);
    return;
  }
  // A ring-family or USP forward beyond kFullCheckMaxRanks that no symmetry covers: every
  // rank's program generated as it runs, O(P x window) ops held (the whole plan would get only the
  // structural check there).
  if (!every_rank && lazy_runs(p.scenario)) {
    const std::unique_ptr<ProgramSource> lazy_source = make_lazy_source(p.scenario);
    run.result = simulate_windowed(*lazy_source, p.topology, p.profile);
    run.lazy = true;
    keep_windowed(*lazy_source);
    return;
  }
  // With a job: one CP group, validated once (beyond 256 ranks: the structural check).
  run.simulated_group_plan = build_plan_to_simulate(p.scenario, request.full_check);
  const Plan& plan = run.simulated_group_plan;
  if (p.job_layout) {
    JobOptions options = job_options(p.scenario);
    options.top_links = kMostLoadedLinks;
    options.record_link_samples = request.trace;
    // --per-op's op_times and a sweep's records read every rank's op times (until December
    // 2026 a job kept them only for a trace, and --per-op printed an empty op_times).
    options.record_ops = request.trace || request.records || request.per_op;
    // Every group where every rank's op times are asked for; --full-check asks only that the
    // group plan pass the validator, which build_plan_to_simulate has run above.
    options.use_symmetry = options.use_symmetry && !options.record_ops;
    run.job = simulate_job(plan, *p.job_layout, p.topology, p.profile, options);
    if (!run.job->refusal.empty()) throw p.scenario.error_at("job.gpus", run.job->refusal);
    run.result = run.job->job;
  } else {
    SimulationOptions options;
    options.record_link_samples = request.trace;
    options.record_ops = options.record_transfers =
        request.trace || request.records || request.per_op;
    run.result = simulate(plan, p.topology, p.profile, options);
  }
  check_memory_budget(p.scenario, summarize(run.result).peak_memory_bytes_max);
}

}  // namespace

SimulationRun run_simulation(const ScenarioSource& source, const SimulateRequest& request,
                             const std::function<void(const std::string&)>& notice) {
  ScenarioSource chosen = source;
  if (request.no_symmetry) chosen.overrides.push_back("schedule.symmetry=off");
  Scenario scenario = load_scenario(chosen);
  if (needs_every_op(request)) {
    // prepare_scenario guards a run it could take lazily by its window, and a mesh tile search
    // by its tiles' quotients; this one builds the whole plan, so that plan's guard answers
    // first, before the topology is loaded (seconds at 65536 GPUs).
    check_whole_plan_first(scenario);
  }
  SimulationRun run{prepare_scenario(std::move(scenario), chosen.limits, notice),
                    {},
                    {},
                    std::nullopt,
                    request.per_op,
                    std::nullopt,
                    std::nullopt};
  try {
    simulate_prepared(run, request);
  } catch (const ScheduleError& e) {
    // A shape the generator cannot lay out, met while a windowed source builds its chunks
    // (build_plan names the key the same way for a whole plan).
    throw run.prepared.scenario.error_at(e.key(), e.what());
  }
  if (!run.prepared.tile_warning.empty()) {
    run.result.warnings.push_back(run.prepared.tile_warning);
  }
  if (!run.prepared.symmetry_warning.empty()) {
    run.result.warnings.push_back(run.prepared.symmetry_warning);
  }
  if (std::string collectives = allgather_kv_cost_warning(run.prepared.scenario.schedule,
                                                          run.prepared.scenario.attention);
      !collectives.empty()) {
    run.result.warnings.push_back(std::move(collectives));
  }
  const CalibrationProfile& profile = run.prepared.profile;
  if (run.prepared.scenario.attention.dtype == DType::fp32) {
    // Profiles are fitted to 16-bit attention kernels (FlashAttention has no fp32 path); the
    // bytes follow the dtype, the compute rates do not (H100 SXM datasheet: dense TF32 is half
    // the BF16 rate, plain FP32 about 1/15).
    run.result.warnings.push_back(fmt::format(
        "{}: attention.dtype fp32 is costed at the profile's compute rates, which are 16-bit "
        "kernels' (only the bytes moved and held follow fp32): compute time is optimistic",
        profile.source));
  }
  const double peak_bytes = summarize(run.result).peak_memory_bytes_max;
  if (profile.device_memory_bytes > 0 && peak_bytes > profile.device_memory_bytes) {
    run.result.warnings.push_back(fmt::format(
        "{}: the simulated peak, {} per GPU, exceeds the device's memory ({}, compute.memory): "
        "the plan would not fit as costed (schedule.memory_budget makes it an error)",
        profile.source, format_bytes(peak_bytes), format_bytes(profile.device_memory_bytes)));
  }
  return run;
}

nlohmann::ordered_json simulation_document(const SimulationRun& run, bool include_wall_clock) {
  const Scenario& s = run.prepared.scenario;
  const ResultContext context{s.name, s.topology_path, s.calibration_path, include_wall_clock,
                              run.windowed_digest};
  nlohmann::ordered_json doc = result_to_json(run.simulated_group_plan, run.result, context);
  if (run.per_op) doc["op_times"] = validation::op_times_to_json(run.simulated_plan(), run.result);
  if (run.job) add_job_json(doc, *run.prepared.job_layout, *run.job);
  if (run.symmetric()) {
    describe_full_ring(doc, run.quotient_plan(), *run.symmetry);
  } else if (run.symmetry) {
    doc["symmetry"] = {{"classes", run.symmetry->classes}, {"exact", false}};
  }
  return doc;
}

}  // namespace tilesim
