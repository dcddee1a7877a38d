#include "sim/scenario/candidate_run.hpp"

#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/symmetric_plan.hpp"

namespace tilesim {
namespace {

std::string refused(const std::string& violation) {
  return violation.empty() ? violation : "schedule.gpus: " + violation;
}

}  // namespace

CandidateRun decide_candidate_run(const PreparedScenario& p, const ScheduleCandidate& c,
                                  bool search) {
  CandidateRun run;
  run.scenario = p.scenario;
  run.scenario.schedule = c.spec;
  const Scenario& s = run.scenario;
  const auto every_rank = [&] {
    run.searched = true;
    run.lazy = !p.job_layout && lazy_runs(s);
    run.refusal = run.lazy ? refused(lazy_violation(s)) : candidate_refusal(p, c);
  };
  if (p.job_layout || !symmetry_applies(s)) {
    every_rank();
    return run;
  }
  run.refusal = refused(windowed_plan_violation(s, 0));
  if (!run.refusal.empty()) return run;
  if (const int least = all_peers_classes_lower_bound(s, p.topology, p.profile); least > 0) {
    run.refusal = refused(windowed_plan_violation(s, least, /*at_least=*/true));
    if (!run.refusal.empty()) return run;
  }
  if (!search) return run;
  run.symmetry = choose_symmetry(s, p.topology, p.profile).symmetry;
  if (run.symmetry && run.symmetry->exact()) {
    run.searched = true;
    run.refusal = refused(windowed_plan_violation(s, run.symmetry->classes));
    return run;
  }
  run.symmetry.reset();
  every_rank();
  return run;
}

}  // namespace tilesim
