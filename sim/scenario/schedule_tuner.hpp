// Searches schedule kind x mesh tile x placement for a prepared scenario and
// ranks the candidates by simulated makespan (the `tune` and `compare` verbs).
//
// Candidates: every kind of kScheduleKinds other than mesh with the scenario's
// own settings (kinds without a generator, or that cannot split this shape,
// are kept with the reason), USP once per Ulysses degree ("usp:u4") and the double
// ring once per inner ring size ("double_ring:inner8"; each the generator's own choice
// when there is none), and mesh for every tile a x b = P with the
// placements node-major and kv-group-major (q-group-major is the same GPU
// assignment as node-major under mesh_tile.hpp's rank numbering, so it is not
// simulated twice). The memory budget of the scenario applies to every mesh
// candidate (a tile that cannot fit is listed with the generator's reason).
// Each candidate runs as `simulate` would run the scenario with its schedule, under the same
// resource guard (candidate_run.hpp): as one rank per class where symmetric_plan.hpp finds a
// quotient (the same figures to the picosecond, tests/test_symmetric_simulation.cpp), else
// every rank, generated as it runs or built whole;
// schedule.symmetry: off simulates every rank; a candidate that runs on the role quotient
// (rank_roles.hpp; schedule.symmetry: roles, or auto where the exact quotient would exceed
// kAutoExactClasses classes) has approximate figures that CandidateResult::approximate marks.
// What bounds a candidate: "compute" when exposed communication is under 10%
// of the makespan, otherwise the slowest link class (nvlink, ib...) on the
// busiest route: the GPU pair whose transfers took the most seconds.
// With a job (scenario `job`), each candidate is simulated as all the job's CP groups at once
// (sim/job/job_simulation.hpp) and its figures are the job's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/model/ring_symmetry.hpp"
#include "sim/model/simulation_result.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {

struct CandidateRun;  // candidate_run.hpp

struct ScheduleCandidate {
  std::string label;  // "ring", "mesh:16x16/kv-group-major"
  ScheduleSpec spec;
};

struct CandidateResult {
  ScheduleCandidate candidate;
  bool ok = false;
  std::string reason;        // why it was left out, when !ok
  bool over_limits = false;  // left out by the resource guard (--max-memory, --max-ops)
  Figures figures;
  std::string bound;  // compute | nvlink | ib | ...
  double sim_wall_s = 0.0;
  double job_slowdown = 1.0;  // with a job: its makespan against one group alone
  // Simulated on a role quotient (schedule.symmetry: roles, rank_roles.hpp): approximate.
  bool approximate = false;
  // Branch and bound (tune_search.hpp): the candidate's proven lower bound on its makespan
  // (makespan_bound.hpp; -1: not computed), and whether it was pruned by it (not simulated:
  // its figures are empty and ok is false).
  double lower_bound_s = -1.0;
  bool pruned = false;
  // Cut off: not simulated to its end (evaluate_candidate's stop_after_ps stopped it at
  // makespan_floor_s) or not at all (the search's cut floor, shape_cut_floor_s, is
  // makespan_floor_s): no figures (ok = false), only that proven lower bound on the makespan.
  // The search keeps a candidate cut off only once it is known not to be among the fastest it
  // prints (tune lists it with that bound under outside_top, tune_verb.hpp).
  bool cut_off = false;
  double makespan_floor_s = -1.0;
};

// USP's Ulysses degrees u for `gpus` ranks: 1 < u < gpus dividing gpus and heads, kv_heads
// dividing u or u dividing kv_heads (usp_schedule.hpp); ascending.
std::vector<int> usp_degrees(const AttentionShape& shape, int gpus);
// Double-ring inner ring sizes k: 1 < k < gpus dividing gpus (k = 1 and k = gpus are the
// ring); ascending.
std::vector<int> double_ring_inner_sizes(int gpus);

std::vector<ScheduleCandidate> tune_candidates(const AttentionShape& shape,
                                               const ScheduleSpec& base, bool mesh_only);

// Why the scenario's resource limits refuse the candidate's whole plan (every rank, built
// whole; in a job, every CP group's: plan_resources_refusal), as "key: message", or empty. How
// a candidate really runs, and its guard: candidate_run.hpp.
std::string candidate_refusal(const PreparedScenario& p, const ScheduleCandidate& c);

// Builds, simulates and summarises one candidate, run as `simulate` would run it
// (candidate_run.hpp: its quotient, every rank generated as it runs, or the whole plan, under
// the same resource guard); a refusal or a ScheduleError becomes ok = false with the reason.
// stop_after_ps: the simulation's stop-at-time (SimulationOptions::stop_after_ps; not with a job or
// a memory budget, whose verdict needs the whole run's peak): a run that stops comes back cut off.
// decided: the run decide_candidate_run(p, c) gave, where the caller has it (null: decided here).
CandidateResult evaluate_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                   Picoseconds stop_after_ps = kNeverStop,
                                   const CandidateRun* decided = nullptr);

// Every candidate, the runnable ones sorted by makespan first.
std::vector<CandidateResult> tune_schedules(const PreparedScenario& p, bool mesh_only = false);
// The order of tune_schedules: runnable first, by makespan; ties and the left out keep their
// candidate order.
void rank_candidates(std::vector<CandidateResult>& results);

// The one resolution of a mesh tile choice (ScheduleSpec::tile_choice), done by
// prepare_scenario and by compare for its mesh:auto and mesh:min-bytes entries:
//   fastest (tile: auto): the tile and placement of the fastest mesh candidate of
//     tune_schedules(p, mesh_only) -- lowest simulated makespan among the tiles that fit
//     the memory budget, if one is set; InputError at schedule.tile when none fits;
//   min_bytes (tile: min-bytes): the tile a x b = P that minimises the bytes each rank
//     receives (fewest_bytes_tile; ties keep the smaller a), placement kept.
// Afterwards tile_choice is given. Nothing to do for other kinds or given tiles.
void resolve_mesh_tile(PreparedScenario& p);

}  // namespace tilesim
