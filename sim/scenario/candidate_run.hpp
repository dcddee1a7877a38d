// How `tune` and `compare` run one candidate schedule: the decision prepare_scenario makes for
// `simulate`, resource guard included, so that a candidate is simulated (or refused) as the
// same scenario would be by `simulate`.
//
// The ladder, in order (decide_run; prepare_scenario runs it too for a scenario that may be
// symmetric, after its own checks before the topology loads: the whole plan, or one class of a
// searched mesh):
//   1. a job: every CP group's plan, whole (the whole plan's guard);
//   2. where a shift symmetry may apply (symmetric_plan.hpp symmetry_applies): the least any
//      quotient of the shape needs (one class), and for pass-Q and all-gather KV the quotient
//      at its class lower bound (O(P) routes), both before the shift search, which routes every
//      rank's peers (P (P - 1) pairs for the all-peers schedules); then the search
//      (choose_symmetry: exact, or auto's role quotient beyond kAutoExactClasses classes) and
//      the guard at the classes found;
//   3. no quotient: every rank, generated as it runs where `simulate` does that (lazy_plan.hpp:
//      the ring family and USP forward beyond 256 GPUs), else the whole plan.
// Until 2026-12 `tune` refused every candidate by its whole plan's size (step 3) before it
// looked for a symmetry: on 16384 GPUs it left out the ring that `simulate` runs in a second.
//
// decide_candidate_run(p, c, /*search=*/false) stops before the search: a refusal then is one
// no symmetry could lift, and `symmetry` is unset (tune's bound phase: the search costs seconds
// a candidate at 16384 GPUs, and a candidate pruned by its closed-form bound never needs it).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "sim/model/ring_symmetry.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"

namespace tilesim {

struct ScheduleCandidate;

struct CandidateRun {
  Scenario scenario;                     // the prepared scenario with the candidate's schedule
  std::optional<RingSymmetry> symmetry;  // set and exact(): its quotient runs
  bool lazy = false;                     // no quotient: every rank generated as it runs
  bool searched = false;                 // the shift search ran (symmetry and lazy are known)
  PlanRefusal refusal;                   // where the limits refuse it (key and message)
  bool long_run_noticed = false;         // decide_run's `notice` was called
};

// Steps 2 and 3 for `scenario` on `topology` and `profile` (step 1, a job, where `in_job`). With
// `choice`, the search's own result: an approximate role quotient, or why none applies. With
// `notice`, called before the search where the quotient at its classes' lower bound is already
// a long run (long_simulation_notice, symmetric_plan.hpp).
CandidateRun decide_run(const Scenario& scenario, const Topology& topology,
                        const CalibrationProfile& profile, bool in_job, bool search = true,
                        SymmetryChoice* choice = nullptr,
                        const std::function<void(const std::string&)>& notice = {});

CandidateRun decide_candidate_run(const PreparedScenario& p, const ScheduleCandidate& c,
                                  bool search = true);

}  // namespace tilesim
