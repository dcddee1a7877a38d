// Branch and bound over the tuner's candidates (schedule_tuner.hpp): the same fastest `keep`
// candidates, in the same order with the same figures, as simulating every one of them.
//
// Each candidate first gets a proven lower bound on its makespan: from the closed forms of its
// shape (shape_bound.hpp: mesh tiles, no plan built) or else from its plan
// (sim/model/makespan_bound.hpp: the quotient plan of one rank per class where the candidate
// runs symmetric; for schedules whose quotient peers are not ring offsets, its compute term
// alone), which costs building the plan, not simulating it. Then the candidates are
// simulated in the order of their bounds (ties keep the candidate order), and one whose bound
// exceeds the keep-th fastest makespan simulated so far is pruned: its makespan is at least its
// bound, so it cannot be among the keep fastest. That threshold only falls as results come in, so
// the candidates among the exhaustive keep fastest are never pruned, and everything simulated has
// the figures it would have had anyway (same code). What differs: pruned candidates have no
// figures (ok = false, pruned = true, lower_bound_s set), so a pruned one that would have been
// left out for the memory budget is listed as pruned.
// A job scenario (every CP group at once) is not bounded: every candidate is simulated.
// Where candidates run on the role quotient (schedule.symmetry: roles, or auto beyond
// kAutoExactClasses exact classes) their makespans are the role quotient's, which
// approximate the full run's (measured equal to the picosecond for rings at 1024-4096 GPUs,
// but not proven at or above each bound), so the search returns the exhaustive order of those
// approximate figures only as far as they respect the bounds.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/schedule_tuner.hpp"

namespace tilesim {

// keep >= 1. progress(done, total) after each candidate bounded (the first `total` / 2 steps)
// and decided (simulated or pruned). The results come in candidate order.
std::vector<CandidateResult> search_candidates(
    const PreparedScenario& p, const std::vector<ScheduleCandidate>& candidates, int keep,
    const std::function<void(std::size_t, std::size_t)>& progress = {});

// The lower bound for one candidate: the closed form of shape_bound.hpp where there is one
// (no plan built, no symmetry search: the guard checks up to the search, candidate_run.hpp),
// otherwise plan_bound_candidate's. Where the shift search ran, its decided run goes to
// `searched_run` (when given), for evaluate_candidate to use.
CandidateResult bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                class MakespanBound& bound,
                                std::optional<CandidateRun>* searched_run = nullptr);

// The lower bound of makespan_bound.hpp for one candidate, building its plan (the quotient's
// where a ring-family candidate runs symmetric, else the whole plan where that fits the limits;
// the compute term alone where the run is lazy or the whole plan would not fit). A candidate
// that cannot run (resource guard, ScheduleError) comes back with ok = false and the reason
// evaluate_candidate would give.
CandidateResult plan_bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                     class MakespanBound& bound);

}  // namespace tilesim
