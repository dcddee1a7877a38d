#include "sim/scenario/tune_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/core/interrupt.hpp"
#include "sim/model/makespan_bound.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/shape_bound.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/schedule.hpp"

namespace tilesim {
namespace {

// The keep-th smallest of the makespans so far (infinity while there are fewer).
class Threshold {
 public:
  explicit Threshold(int keep) : keep_(static_cast<std::size_t>(keep)) {}
  void add(double makespan_s) {
    fastest_.insert(std::upper_bound(fastest_.begin(), fastest_.end(), makespan_s), makespan_s);
    if (fastest_.size() > keep_) fastest_.pop_back();
  }
  double value_s() const {
    return fastest_.size() < keep_ ? std::numeric_limits<double>::infinity() : fastest_.back();
  }

 private:
  std::size_t keep_;
  std::vector<double> fastest_;  // ascending, at most keep_
};

}  // namespace

CandidateResult bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                MakespanBound& bound) {
  const std::string refusal = candidate_refusal(p, c);
  if (refusal.empty()) {
    const std::optional<double> shape_s =
        shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
    if (shape_s) {
      CandidateResult r;
      r.candidate = c;
      r.ok = true;
      r.lower_bound_s = *shape_s;
      return r;
    }
  }
  return plan_bound_candidate(p, c, bound);
}

CandidateResult plan_bound_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                     MakespanBound& bound) {
  CandidateResult r;
  r.candidate = c;
  try {
    r.reason = candidate_refusal(p, c);
    if (!r.reason.empty()) return r;
    // The bound reads a quotient's peers as ring offsets (makespan_bound.cpp), so only the
    // ring family's quotient is bounded; mesh and double ring are bounded on the full plan.
    const bool ring_family =
        c.spec.kind == "ring" || c.spec.kind == "zigzag" || c.spec.kind == "striped";
    const std::optional<RingSymmetry> symmetry =
        ring_family ? candidate_symmetry(p, c) : std::nullopt;
    if (symmetry && symmetry->exact()) {
      Scenario s = p.scenario;
      s.schedule = c.spec;
      r.lower_bound_s = bound.lower_bound_s(build_symmetric_plan(s, *symmetry), &*symmetry);
    } else {
      r.lower_bound_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
    }
    r.ok = true;
  } catch (const ScheduleError& e) {
    r.reason = fmt::format("{}: {}", e.key(), e.what());
  }
  return r;
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
  for (std::size_t i = 0; i < n; ++i) {
    throw_if_interrupted();
    results[i] = bound_candidate(p, candidates[i], bound);
    report(i + 1);
  }
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return results[x].lower_bound_s < results[y].lower_bound_s;
  });
  Threshold threshold(std::max(keep, 1));
  std::size_t done = n;
  for (std::size_t i : order) {
    CandidateResult& r = results[i];
    if (r.ok) {  // one that cannot run keeps its reason
      const double lower_bound_s = r.lower_bound_s;
      if (lower_bound_s > threshold.value_s()) {
        r.ok = false;
        r.pruned = true;
        r.reason = fmt::format("pruned: its makespan is at least {:.6g} s, above the {} fastest",
                               lower_bound_s, keep);
      } else {
        r = evaluate_candidate(p, candidates[i]);
        r.lower_bound_s = lower_bound_s;
        if (r.ok) threshold.add(r.figures.makespan_s);
      }
    }
    report(++done);
  }
  return results;
}

}  // namespace tilesim
