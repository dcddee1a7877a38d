#include "sim/scenario/prepared_scenario.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "sim/core/input_error.hpp"
#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"
#include "sim/plan/plan_structure.hpp"
#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/topology/topology_loader.hpp"

namespace tilesim {
namespace {

// p.symmetry and p.symmetry_warning for `scenario` on p's topology and profile.
void choose_symmetry_of(PreparedScenario& p, const Scenario& scenario) {
  SymmetryChoice choice = choose_symmetry(scenario, p.topology, p.profile);
  p.symmetry = std::move(choice.symmetry);
  p.symmetry_warning = std::move(choice.warning);
}

}  // namespace

PreparedScenario prepare_scenario(const std::string& path,
                                  const std::vector<std::string>& overrides,
                                  const ResourceLimits& limits) {
  return prepare_scenario(load_scenario(path, overrides), limits);
}

PreparedScenario prepare_scenario(Scenario scenario, const ResourceLimits& limits,
                                  const std::function<void(const std::string&)>& notice) {
  PreparedScenario p;
  p.scenario = std::move(scenario);
  p.scenario.limits = limits;
  // A run that may be symmetric is guarded once its classes are known, on the topology.
  const bool maybe_symmetric = symmetry_applies(p.scenario);
  // The plan of every rank: whole, or generated as it runs where `simulate` does that (a verb
  // that builds it whole is guarded again by build_plan).
  const auto check_every_rank_plan = [](const Scenario& s) {
    if (lazy_runs(s)) {
      check_lazy_resources(s);
    } else {
      check_plan_resources(s);
    }
  };
  if (searched_mesh_tiles_symmetric(p.scenario)) {
    // Each tile is guarded as it runs (candidate_run.hpp), a quotient; what the least of them
    // needs is one class of the tile of least memory (resource_guard.hpp).
    check_symmetric_plan_resources(p.scenario, 0);
  } else if (!maybe_symmetric) {
    check_every_rank_plan(p.scenario);
  }
  const Scenario& s = p.scenario;
  const std::string& path = s.file;
  if (!std::filesystem::exists(s.topology_path)) {
    throw s.error_at("topology", fmt::format("file '{}' does not exist", s.topology_path));
  }
  p.topology = load_topology(s.topology_path, gpus_wanted(s));
  if (p.topology.gpus_per_node > 0) p.scenario.schedule.gpus_per_node = p.topology.gpus_per_node;
  p.job_layout = resolve_job(s, p.topology);
  // A CP group sees as "its node" the ranks it has there (one per node with tp = GPUs/node).
  if (p.job_layout && p.topology.gpus_per_node > 0) {
    p.scenario.schedule.gpus_per_node =
        p.job_layout->group_ranks_per_node(p.topology.gpus_per_node);
  }
  // USP's automatic Ulysses degree follows the node size, and with it a lazy run's window:
  // checked again now that the topology has set it (the check above took the default).
  if (!maybe_symmetric && lazy_runs(p.scenario)) check_lazy_resources(p.scenario);
  if (s.schedule.gpus > p.topology.gpu_count()) {
    throw s.error_at(
        "schedule.gpus",
        fmt::format("{} GPUs requested, but topology '{}' ({}) has {}", s.schedule.gpus,
                    p.topology.name, s.topology_path, p.topology.gpu_count()));
  }
  std::string calibration = s.calibration_path;
  if (calibration.empty()) {
    calibration = default_calibration_path(s.topology_path, p.topology.gpu_model);
    if (!std::filesystem::exists(calibration)) {
      throw InputError(path, s.line_of_key("topology"), "calibration",
                       fmt::format("no calibration given and no default profile '{}' for GPU "
                                   "model '{}'",
                                   calibration, p.topology.gpu_model));
    }
  } else if (!std::filesystem::exists(calibration)) {
    throw s.error_at("calibration", fmt::format("file '{}' does not exist", calibration));
  }
  p.scenario.calibration_path = calibration;
  p.profile = load_calibration(calibration);
  bool noticed = false;  // the long-run notice, given before the symmetry search
  if (maybe_symmetric) {
    // The guard's ladder (candidate_run.hpp), as tune and compare run it for a candidate: what
    // any quotient needs before the search routes every rank's peers, then the classes found.
    SymmetryChoice choice;
    const CandidateRun run = decide_run(s, p.topology, p.profile, /*in_job=*/false,
                                        /*search=*/true, &choice, notice);
    if (!run.refusal.empty()) throw s.error_at(run.refusal.key, run.refusal.message);
    noticed = run.long_run_noticed;
    p.symmetry = std::move(choice.symmetry);
    p.symmetry_warning = std::move(choice.warning);
  }
  resolve_mesh_tile(p);
  // A mesh tile the tuner chose is known only now.
  if (!p.symmetry) choose_symmetry_of(p, p.scenario);
  if (notice && !noticed && !p.job_layout) {
    const bool quotient = p.symmetry && p.symmetry->exact();
    const std::string text = long_simulation_notice(
        p.scenario, quotient ? p.symmetry->classes : p.scenario.schedule.gpus);
    if (!text.empty()) notice(text);
  }
  return p;
}

std::string to_string(const PlanRefusal& refusal) {
  return refusal.empty() ? std::string() : refusal.key + ": " + refusal.message;
}

PlanRefusal plan_resources_refusal(const Scenario& scenario) {
  const std::string too_big =
      resource_violation(scenario.attention, scenario.schedule, scenario.limits);
  if (!too_big.empty()) return {"schedule.gpus", too_big};
  const std::optional<JobSpec>& job = scenario.job;
  if (!job || job->gpus % scenario.schedule.gpus != 0) return {};  // resolve_job names the key
  // Every group runs with schedule.symmetry: off; otherwise at least one does, and
  // simulate_job asks again (job_resources_refusal) once its search has found how many.
  const int groups = job->gpus / scenario.schedule.gpus;
  return job_resources_refusal(scenario, symmetry_switched_off(scenario) ? groups : 1);
}

PlanRefusal job_resources_refusal(const Scenario& scenario, int groups_simulated,
                                  double routed_pairs) {
  const std::optional<JobSpec>& job = scenario.job;
  if (!job || job->gpus % scenario.schedule.gpus != 0) return {};
  // The job plan holds the simulated groups' plans (sim/job/job_plan.hpp): the group's estimate
  // (but the process's base) times those groups, and the job's GPUs.
  const int groups = job->gpus / scenario.schedule.gpus;
  const double simulated = static_cast<double>(groups_simulated);
  const PlanEstimate group = estimate_plan(scenario.attention, scenario.schedule);
  const double ops = group.ops * simulated;
  const double memory_bytes = kSimBaseBytes + (group.memory_bytes - kSimBaseBytes) * simulated +
                              kJobBytesPerGpu * static_cast<double>(job->gpus) +
                              kSearchBytesPerPair * routed_pairs;
  const double max_memory = scenario.limits.max_memory_bytes > 0 ? scenario.limits.max_memory_bytes
                                                                 : default_max_memory_bytes();
  const double max_ops = scenario.limits.max_ops;
  if (memory_bytes > max_memory || (max_ops > 0 && ops > max_ops)) {
    const std::string which =
        groups_simulated >= groups
            ? fmt::format("its {} CP groups", groups)
            : fmt::format(
                  "{} of its {} CP groups simulated (the others are their copies: "
                  "docs/jobs.md)",
                  groups_simulated, groups);
    return {"job.gpus",
            fmt::format("a job that fits: {} hold ~{:.3g} ops, ~{} to simulate (limits: {}{})",
                        which, ops, format_bytes(memory_bytes), format_bytes(max_memory),
                        max_ops > 0 ? fmt::format(", {:.3g} ops", max_ops) : std::string())};
  }
  return {};
}

void check_plan_resources(const Scenario& scenario) {
  const PlanRefusal refusal = plan_resources_refusal(scenario);
  if (!refusal.empty()) throw scenario.error_at(refusal.key, refusal.message);
}

void check_whole_plan_first(const Scenario& scenario) {
  if (lazy_runs(scenario) || searched_mesh_tiles_symmetric(scenario)) {
    check_plan_resources(scenario);
  }
}

Plan build_plan(const Scenario& scenario) {
  check_plan_resources(scenario);
  try {
    return make_plan(scenario.attention, scenario.schedule);
  } catch (const ScheduleError& e) {
    throw scenario.error_at(e.key(), e.what());
  }
}

Plan build_valid_plan(const Scenario& scenario, PlanReport* report) {
  Plan plan = build_plan(scenario);
  throw_if_interrupted();  // large plans take seconds to build and to validate
  PlanReport r = validate_plan(plan);
  throw_if_interrupted();
  if (!r.ok()) {
    std::string all;
    for (const auto& e : r.errors) all += "\n  " + e;
    throw std::logic_error(fmt::format("generated {} plan is invalid:{}", plan.schedule, all));
  }
  if (report) *report = std::move(r);
  return plan;
}

Plan build_plan_to_simulate(const Scenario& scenario, bool full_check) {
  if (full_check || scenario.schedule.gpus <= kFullCheckMaxRanks) {
    return build_valid_plan(scenario);
  }
  Plan plan = build_plan(scenario);
  throw_if_interrupted();
  const std::vector<std::string> errors = plan_structure_errors(plan);
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += "\n  " + e;
    throw std::logic_error(fmt::format("generated {} plan is malformed:{}", plan.schedule, all));
  }
  return plan;
}

std::string memory_budget_violation(const ScheduleSpec& spec, const AttentionShape& shape,
                                    double peak_bytes) {
  if (spec.memory_budget_bytes <= 0 || peak_bytes <= spec.memory_budget_bytes) return {};
  const char* why = spec.kind != "mesh" ? " (this schedule's memory does not depend on it)"
                    : shape.has_backward()
                        ? " (mesh windows the forward's buffers; the backward's are not windowed)"
                        : "";
  return fmt::format("the plan's simulated peak, {} per GPU, exceeds the budget of {}{}",
                     format_bytes(peak_bytes), format_bytes(spec.memory_budget_bytes), why);
}

void check_memory_budget(const Scenario& scenario, double peak_bytes) {
  const std::string why =
      memory_budget_violation(scenario.schedule, scenario.attention, peak_bytes);
  if (!why.empty()) {
    throw scenario.error_at("schedule.memory_budget", "a budget this plan fits in: " + why);
  }
}

}  // namespace tilesim
