#include "sim/scenario/tune_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

#include "sim/core/interrupt.hpp"
#include "sim/core/units.hpp"
#include "sim/model/makespan_bound.hpp"
#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/shape_bound.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

// What the search knows of the makespans of the candidates simulated so far (those not pruned,
// in the order decided), each exact or, for one cut off, only above the time its run stopped
// at. Two order statistics bracket the keep-th smallest makespan, the exhaustive search's
// threshold at this point: floor_s() (cut off ones at their stop time) <= it <= ceiling_s()
// (cut off ones at infinity). Both are infinity while fewer than keep are known.
class Known {
 public:
  explicit Known(std::size_t keep) : keep_(keep) {}
  void add(std::size_t i) { simulated_.push_back(i); }
  double floor_s(const std::vector<CandidateResult>& results) const {
    return kth(results, [](const CandidateResult& r) { return r.makespan_floor_s; });
  }
  double ceiling_s(const std::vector<CandidateResult>& results) const {
    return kth(results, [](const CandidateResult&) { return kInf; });
  }
  // The cut off candidate with the lowest stop time, if there is one below `at_s` (or at it).
  std::optional<std::size_t> lowest_cut_off(const std::vector<CandidateResult>& results,
                                            double at_s) const {
    std::optional<std::size_t> best;
    for (std::size_t i : simulated_) {
      const CandidateResult& r = results[i];
      if (r.cut_off && r.makespan_floor_s <= at_s &&
          (!best || r.makespan_floor_s < results[*best].makespan_floor_s)) {
        best = i;
      }
    }
    return best;
  }
  // The largest makespan known exactly (0 if none).
  double largest_s(const std::vector<CandidateResult>& results) const {
    double out = 0.0;
    for (std::size_t i : simulated_) {
      if (results[i].ok) out = std::max(out, results[i].figures.makespan_s);
    }
    return out;
  }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  template <class CutOffValue>
  double kth(const std::vector<CandidateResult>& results, CutOffValue cut_off_value) const {
    std::vector<double> values;
    for (std::size_t i : simulated_) {
      const CandidateResult& r = results[i];
      // One simulated but not ok (over the memory budget) does not count, as before.
      if (r.ok) values.push_back(r.figures.makespan_s);
      if (r.cut_off) values.push_back(cut_off_value(r));
    }
    if (values.size() < keep_) return kInf;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(keep_ - 1),
                     values.end());
    return values[keep_ - 1];
  }

  std::size_t keep_;
  std::vector<std::size_t> simulated_;
};

// The stop time for a simulation: the ceiling, above which a makespan cannot be printed;
// while it is infinite, a guess (kGuessFactor x the candidate's bound or the largest makespan
// known, whichever is larger), so that a candidate whose bound is far below its makespan
// (the all-gather's: its compute) does not run to its end before enough is known to drop it.
// A guess that turns out too low costs a rerun, never a different answer. No guess where no
// candidate can end up cut off (no more runnable candidates than are printed): every one runs
// whole.
constexpr double kGuessFactor = 2.0;
Picoseconds stop_ps(double ceiling_s, double guess_s, bool guess) {
  if (std::isfinite(ceiling_s)) return s_to_ps(ceiling_s);
  return guess ? s_to_ps(kGuessFactor * guess_s) : kNeverStop;
}

// The plan-based bound of a decided run: the quotient's for a ring-family candidate that runs
// symmetric (the bound reads a quotient's peers as ring offsets, makespan_bound.cpp); for
// another whose quotient is built whole to run, or the double ring's (generated as it runs since
// 7 December 2026, and summed so: its whole plan, ~6 P^2 ops, is no bound to build), that
// quotient's compute term (each representative runs a real rank's program, whose computes its
// own run cannot shorten; the whole plan of 1024 ranks took 26 s to build and cost for causal
// USP u = 32, both passes); the whole plan's for the others where it fits the limits, else the
// compute term of the shape.
CandidateResult plan_bound_of(const CandidateRun& run, const PreparedScenario& p,
                              const ScheduleCandidate& c, MakespanBound& bound) {
  CandidateResult r;
  r.candidate = c;
  r.reason = to_string(run.refusal);
  r.over_limits = !r.reason.empty();
  if (r.over_limits) return r;
  const Scenario& s = run.scenario;
  const bool ring_family =
      c.spec.kind == "ring" || c.spec.kind == "zigzag" || c.spec.kind == "striped";
  if (run.lazy) {
    // Its whole plan is what the lazy run avoids building: by the compute term.
    r.lower_bound_s = shape_compute_floor_s(s.attention, c.spec, p.profile);
  } else if (ring_family && run.symmetry) {
    r.lower_bound_s = bound.lower_bound_s(build_symmetric_plan(s, *run.symmetry), &*run.symmetry);
  } else if (run.symmetry && !symmetric_source(s, *run.symmetry)) {
    r.lower_bound_s = bound.compute_lower_bound_s(build_symmetric_plan(s, *run.symmetry));
  } else if (run.symmetry && windowed_double_ring_quotient(s, *run.symmetry)) {
    r.lower_bound_s = bound.compute_lower_bound_s(*symmetric_source(s, *run.symmetry));
  } else if (candidate_refusal(p, c).empty()) {
    r.lower_bound_s = bound.lower_bound_s(make_plan(s.attention, c.spec));
  } else {
    r.lower_bound_s = shape_compute_floor_s(s.attention, c.spec, p.profile);
  }
  r.ok = true;
  return r;
}

CandidateResult schedule_error(const ScheduleCandidate& c, const ScheduleError& e) {
  CandidateResult r;
  r.candidate = c;
  r.reason = fmt::format("{}: {}", e.key(), e.what());
  return r;
}

}  // namespace

CandidateResult bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                MakespanBound& bound, std::optional<CandidateRun>* searched_run) {
  try {
    // The guard up to the shift search (candidate_run.hpp): the search routes every rank's
    // peers, seconds a candidate on 16384 GPUs, and one bounded in closed form (shape_bound.hpp)
    // needs it only if it is simulated. A refusal only the classes found can tell (too many)
    // then comes when it is simulated; a candidate pruned first is listed as pruned.
    CandidateRun run = decide_candidate_run(p, c, /*search=*/false);
    CandidateResult r;
    r.candidate = c;
    r.reason = to_string(run.refusal);
    r.over_limits = !r.reason.empty();
    if (r.over_limits) {
      // Not run, but bounded where a closed form needs no plan, so that a tile search can tell
      // a refused tile that might be faster than its choice from one that cannot be.
      if (const std::optional<double> shape_s =
              shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound)) {
        r.lower_bound_s = *shape_s;
      }
      return r;
    }
    if (const std::optional<double> shape_s =
            shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound)) {
      r.ok = true;
      r.lower_bound_s = *shape_s;
      return r;
    }
    if (!run.searched) run = decide_candidate_run(p, c);
    CandidateResult bounded = plan_bound_of(run, p, c, bound);
    if (searched_run != nullptr) *searched_run = std::move(run);
    return bounded;
  } catch (const ScheduleError& e) {
    return schedule_error(c, e);
  }
}

CandidateResult plan_bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                     MakespanBound& bound) {
  try {
    return plan_bound_of(decide_candidate_run(p, c), p, c, bound);
  } catch (const ScheduleError& e) {
    return schedule_error(c, e);
  }
}

std::vector<CandidateResult> search_candidates(
    const PreparedScenario& p, const std::vector<ScheduleCandidate>& candidates, int keep,
    const std::function<void(std::size_t, std::size_t)>& progress) {
  const std::size_t n = candidates.size();
  std::vector<CandidateResult> results(n);
  auto report = [&](std::size_t done) {
    if (progress) progress(done, 2 * n);
  };
  if (p.job_layout) {  // a job's plan is every group's: not bounded, every candidate simulated
    for (std::size_t i = 0; i < n; ++i) {
      results[i] = evaluate_candidate(p, candidates[i]);
      report(2 * (i + 1));
    }
    return results;
  }
  MakespanBound bound(p.topology, p.profile);
  // The runs decided while bounding, kept for the simulation: the shift search (choose_symmetry)
  // costs seconds a candidate at 1024 GPUs under the causal mask.
  std::vector<std::optional<CandidateRun>> searched_runs(n);
  for (std::size_t i = 0; i < n; ++i) {
    throw_if_interrupted();
    results[i] = bound_candidate(p, candidates[i], bound, &searched_runs[i]);
    report(i + 1);
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return results[x].lower_bound_s < results[y].lower_bound_s;
  });
  // The exhaustive search's decisions, replayed: candidate i is pruned iff its bound is above
  // the keep-th smallest makespan of those simulated before it. A candidate simulated runs
  // only until it is known not to be printable (cut off); where a cut off run leaves a
  // decision open (the bound between floor and ceiling), or might hide one of the fastest,
  // it is run again further.
  // The cut floors (shape_bound.hpp): a candidate whose cut floor is above the stop time is
  // cut off there without a simulation.
  std::vector<double> cut_floor_s(n, -1.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!results[i].ok) continue;
    const std::optional<double> floor_s =
        shape_cut_floor_s(p.scenario.attention, candidates[i].spec, p.profile, bound);
    if (floor_s) cut_floor_s[i] = *floor_s;
  }
  const bool guess = std::count_if(results.begin(), results.end(), [](const CandidateResult& r) {
                       return r.ok;
                     }) > std::max(keep, 1);
  Known known(static_cast<std::size_t>(std::max(keep, 1)));
  auto evaluate = [&](std::size_t i, Picoseconds stop_after_ps) {
    if (stop_after_ps != kNeverStop && cut_floor_s[i] > ps_to_s(stop_after_ps) &&
        candidates[i].spec.memory_budget_bytes <= 0) {
      results[i].ok = false;
      results[i].cut_off = true;
      results[i].makespan_floor_s = cut_floor_s[i];
      results[i].reason = "cut off";
      return;
    }
    const double lower_bound_s = results[i].lower_bound_s;
    const double wall_before_s = results[i].sim_wall_s;
    results[i] = evaluate_candidate(p, candidates[i], stop_after_ps,
                                    searched_runs[i] ? &*searched_runs[i] : nullptr);
    results[i].lower_bound_s = lower_bound_s;
    results[i].sim_wall_s += wall_before_s;  // a rerun's time adds to the first run's
  };
  auto refine = [&](std::size_t j) {
    evaluate(j, stop_ps(known.ceiling_s(results), results[j].makespan_floor_s, guess));
  };
  std::size_t done = n;
  for (std::size_t i : order) {
    CandidateResult& r = results[i];
    if (r.ok) {  // one that cannot run keeps its reason
      const double lower_bound_s = r.lower_bound_s;
      for (;;) {
        throw_if_interrupted();
        if (lower_bound_s > known.ceiling_s(results)) {
          r.ok = false;
          r.pruned = true;
          r.reason = fmt::format("pruned: its makespan is at least {:.6g} s, above the {} fastest",
                                 lower_bound_s, keep);
          break;
        }
        if (lower_bound_s <= known.floor_s(results)) {
          evaluate(i, stop_ps(known.ceiling_s(results),
                              std::max(lower_bound_s, known.largest_s(results)), guess));
          known.add(i);
          break;
        }
        refine(*known.lowest_cut_off(results, lower_bound_s));
      }
    }
    report(++done);
  }
  // A cut off candidate is left out of the keep fastest only if its stop time is above the
  // keep-th fastest makespan.
  for (;;) {
    const std::optional<std::size_t> j = known.lowest_cut_off(results, known.ceiling_s(results));
    if (!j) break;
    throw_if_interrupted();
    refine(*j);
  }
  return results;
}

}  // namespace tilesim
