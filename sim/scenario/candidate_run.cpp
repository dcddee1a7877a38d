#include "sim/scenario/candidate_run.hpp"

#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/schedules/schedule_kinds.hpp"

namespace tilesim {
namespace {

PlanRefusal at_gpus(const std::string& violation) {
  return violation.empty() ? PlanRefusal{} : PlanRefusal{"schedule.gpus", violation};
}

}  // namespace

CandidateRun decide_run(const Scenario& scenario, const Topology& topology,
                        const CalibrationProfile& profile, bool in_job, bool search,
                        SymmetryChoice* choice,
                        const std::function<void(const std::string&)>& notice) {
  // A candidate's heads that do not split (Ulysses over 1024 GPUs with 32 heads) or a pass
  // it has not (pass-Q's backward) are its reason, as the scenario loader says for `simulate`,
  // not a guard's estimate of a plan that could never be built.
  check_kind_fits_shape(scenario.attention, scenario.schedule);
  CandidateRun run;
  run.scenario = scenario;
  const Scenario& s = run.scenario;
  const auto every_rank = [&] {
    run.searched = true;
    run.lazy = !in_job && lazy_runs(s);
    run.refusal = run.lazy ? at_gpus(lazy_violation(s)) : plan_resources_refusal(s);
  };
  if (in_job || !symmetry_applies(s)) {
    every_rank();
    return run;
  }
  run.refusal = at_gpus(windowed_plan_violation(s, 0));
  if (!run.refusal.empty()) return run;
  if (const int least = all_peers_classes_lower_bound(s, topology, profile); least > 0) {
    run.refusal = at_gpus(windowed_plan_violation(s, least, /*at_least=*/true));
    if (!run.refusal.empty()) return run;
    if (notice && search) {
      if (std::string text = long_simulation_notice(s, least, /*at_least=*/true); !text.empty()) {
        notice(text);
        run.long_run_noticed = true;
      }
    }
  }
  if (!search) return run;
  SymmetryChoice found = choose_symmetry(s, topology, profile);
  run.symmetry = found.symmetry;
  if (choice) *choice = std::move(found);
  if (run.symmetry && run.symmetry->exact()) {
    run.searched = true;
    run.refusal = at_gpus(windowed_plan_violation(s, run.symmetry->classes));
    return run;
  }
  run.symmetry.reset();
  every_rank();
  return run;
}

CandidateRun decide_candidate_run(const PreparedScenario& p, const ScheduleCandidate& c,
                                  bool search) {
  Scenario s = p.scenario;
  s.schedule = c.spec;
  return decide_run(s, p.topology, p.profile, p.job_layout.has_value(), search);
}

}  // namespace tilesim
