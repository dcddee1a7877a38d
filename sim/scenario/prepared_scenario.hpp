// A scenario with everything it names loaded and checked: the topology sized
// to the GPU count (job.gpus with a job), the calibration profile, and a validated plan.
// With a job the plan built and validated is one CP group's; the schedule's gpus_per_node
// is the group's ranks per node (JobLayout::group_ranks_per_node).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/job/job_layout.hpp"
#include "sim/model/calibration_profile.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/plan/plan.hpp"
#include "sim/plan/validator.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {

struct PreparedScenario {
  Scenario scenario;
  Topology topology;
  CalibrationProfile profile;
  std::optional<JobLayout> job_layout;  // with scenario.job: where each group's ranks run
  // The schedule's shift symmetry (sim/scenario/symmetric_plan.hpp scenario_symmetry), found
  // once here where the scenario allows it: the resource guard sizes a symmetric run by its
  // classes, and `simulate` runs its quotient plan from the same value (the search routes
  // every rank's peers: 32K routes for a mesh on 16384 GPUs).
  std::optional<RingSymmetry> symmetry;
  // What the run's symmetry is where it is not what schedule.symmetry asked for plainly (roles
  // declined; auto on the approximate role quotient), empty otherwise: `simulate` adds it to
  // the result's warnings.
  std::string symmetry_warning;
  // A mesh tile chosen by its run (tile: auto) where the resource guard left out a tile that
  // might be faster (resolve_mesh_tile), empty otherwise: `simulate` adds it to the warnings.
  std::string tile_warning;
};

// Throws InputError for anything wrong in the scenario or the files it names,
// including more GPUs than a fixed-size topology has; a plan estimated beyond `limits`
// (checked before the topology is sized to the GPU count; kept in scenario.limits).
// A mesh tile left to tilesim (tile: auto or min-bytes, or no tile) is resolved here, once
// (resolve_mesh_tile in schedule_tuner.hpp): auto is the tuner's fastest tile within the
// memory budget.
PreparedScenario prepare_scenario(const std::string& path,
                                  const std::vector<std::string>& overrides,
                                  const ResourceLimits& limits = {});
// The same for a scenario already loaded (load_scenario_text). `notice`, where given, is called
// once with symmetric_plan.hpp's long_simulation_notice where what will run is estimated to be
// long: before the symmetry search where its quotient at the classes' lower bound already is,
// else at the end for the quotient found or every rank (never for a job, whose groups
// simulate_job guards).
PreparedScenario prepare_scenario(Scenario scenario, const ResourceLimits& limits = {},
                                  const std::function<void(const std::string&)>& notice = {});

// Why the whole plan (with scenario.job: the CP groups simulated, sim/job/job_plan.hpp) does
// not pass scenario.limits, at the key to name: schedule.gpus, or job.gpus for a job whose
// group fits alone; empty where it fits.
struct PlanRefusal {
  std::string key;
  std::string message;
  bool empty() const { return message.empty(); }
};
// "key: message", or empty where nothing is refused.
std::string to_string(const PlanRefusal& refusal);
// A job's groups: all of them with schedule.symmetry: off, else the one group any quotient of
// whole groups runs (job_symmetry.hpp); simulate_job then asks job_resources_refusal for the
// groups its search found.
PlanRefusal plan_resources_refusal(const Scenario& scenario);
// A job (scenario.job) simulating `groups_simulated` of its CP groups, with its topology and
// the `routed_pairs` GPU pairs its symmetry search routes (kSearchBytesPerPair each): refused
// at job.gpus, or empty (also without a job).
PlanRefusal job_resources_refusal(const Scenario& scenario, int groups_simulated,
                                  double routed_pairs = 0.0);
// InputError at the refusal's key when there is one.
void check_plan_resources(const Scenario& scenario);
// For a verb that builds the whole plan of every rank (plan, validate, simulate's --trace,
// --per-op, --full-check): that plan's guard, where prepare_scenario would first guard a
// smaller run (one generated as it runs) or search the mesh's tiles (minutes at 16384 GPUs)
// before the whole plan's guard refused it.
void check_whole_plan_first(const Scenario& scenario);

// Generates the schedule's plan; a shape the schedule cannot split is an
// InputError at the scenario key that causes it, and so is a plan whose estimated size
// passes scenario.limits (sim/scenario/resource_guard.hpp), before any of it is built.
Plan build_plan(const Scenario& scenario);

// The schedule's memory budget against a simulated peak: "" when it fits (or there is no
// budget), else why not. Mesh picks its caching to fit the budget; the other schedules'
// memory does not depend on it, so for them the budget is a check on the result.
std::string memory_budget_violation(const ScheduleSpec& spec, const AttentionShape& shape,
                                    double peak_bytes);

// Throws InputError at schedule.memory_budget when memory_budget_violation is not "".
void check_memory_budget(const Scenario& scenario, double peak_bytes);

// Builds and validates; a plan that fails validation is a generator bug and
// throws std::logic_error listing the validator's errors.
Plan build_valid_plan(const Scenario& scenario, PlanReport* report = nullptr);

// Up to this many ranks a plan to simulate gets the validator's full proof (a dry run
// as long as the simulation); beyond, only the structural check (docs/design-notes.md
// "One pass"): every generator is proven by the validator at 1..256 ranks in the tests,
// the tracker rejects unmatched sends and receives when it is built, and the simulator
// reports a plan that cannot finish (PlanError naming the first blocked op).
inline constexpr int kFullCheckMaxRanks = 256;

// The plan `simulate`, `sweep` and the like run: build_valid_plan up to
// kFullCheckMaxRanks ranks (or always, with `full_check`), else built and checked by
// plan_structure_errors (O(ops), no dry run). A failing check is a generator bug:
// std::logic_error listing the errors.
Plan build_plan_to_simulate(const Scenario& scenario, bool full_check = false);

}  // namespace tilesim
