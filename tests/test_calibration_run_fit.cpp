// The run fit (sim/calibration/run_fit.hpp) on synthetic timelines with known parameters:
// compute ops last scale * kernel + overhead, transfers alpha + bytes / beta (beta = the
// profile's flow cap, which the fit keeps); the fit must recover scale, overhead and alpha
// within 2%, ignore outliers, and write them into the profile.
#include <catch2/catch.hpp>

#include "sim/calibration/run_fit.hpp"
#include "sim/model/compute_model.hpp"
#include "sim/schedules/ring_schedule.hpp"
#include "tests/plan_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

using namespace tilesim;
using namespace tilesim::testing;
using calibration::MeasuredRun;

namespace {

struct Truth {
  double scale = 1.15;
  double overhead_s = 300e-6;
  double alpha_s = 120e-6;
  double beta_bytes_per_s = 3e9;
};

CalibrationProfile base_profile() {
  CalibrationProfile p = ideal_profile(20e9);
  p.launch_overhead_s = 5e-6;
  p.forward[128].points = {{256.0, 0.7}, {1024.0, 0.9}};
  LinkCost& shm = p.links[static_cast<std::size_t>(LinkClass::nvlink)];
  shm.alpha_s = 50e-6;
  shm.flow_cap_bytes_per_s = Truth{}.beta_bytes_per_s;
  return p;
}

// A ring run whose ops take exactly the true costs; `share` stretches kernels as ranks that
// share cores would. Transfers: both sides post at `post_s`, so the transfer is its duration.
MeasuredRun synthetic_run(std::int64_t chunk, int ranks, const CalibrationProfile& profile,
                          const Truth& truth, double share) {
  MeasuredRun run;
  run.plan = make_ring_plan(mha_shape(chunk * ranks), ranks);
  const ComputeModel model(run.plan, profile);
  for (int r = 0; r < ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    std::vector<OpTiming> ops(program.size());
    double clock_s = 0.0;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      double duration_s = 0.0;
      if (op.kind == OpKind::compute) {
        const double kernel_s = model.compute_time_s(program, i) - profile.launch_overhead_s;
        duration_s = truth.overhead_s + truth.scale * share * kernel_s;
      } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
        const int object = op.kind == OpKind::send ? program.reads(i)[0] : program.writes(i)[0];
        duration_s = truth.alpha_s + run.plan.object(object).bytes / truth.beta_bytes_per_s;
        // Every rank posts comm group g at the same instant, so pairs start together.
        clock_s = 1.0 * op.comm_group;
      }
      ops[static_cast<std::size_t>(i)] = {s_to_ps(clock_s), s_to_ps(clock_s + duration_s)};
      if (op.kind == OpKind::compute) clock_s += duration_s;
    }
    run.ops.push_back(ops);
  }
  return run;
}

}  // namespace

TEST_CASE("calibration: the run fit recovers compute scale, overhead, alpha and beta") {
  const CalibrationProfile profile = base_profile();
  const Truth truth;
  std::vector<MeasuredRun> runs;
  for (std::int64_t chunk : {256, 512, 1024}) {
    runs.push_back(synthetic_run(chunk, 2, profile, truth, 1.0));
  }
  const calibration::RunFit fit = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(fit.compute.slope == Approx(truth.scale).epsilon(0.02));
  CHECK(fit.compute.intercept == Approx(truth.overhead_s).epsilon(0.02));
  REQUIRE(fit.has_transfers);
  CHECK(fit.transfer_alpha_s == Approx(truth.alpha_s).epsilon(0.02));

  const CalibrationProfile fitted = calibration::apply_run_fit(profile, fit, LinkClass::nvlink);
  CHECK(fitted.peak_flops == Approx(profile.peak_flops / truth.scale).epsilon(0.02));
  CHECK(fitted.launch_overhead_s == Approx(truth.overhead_s).epsilon(0.02));
  CHECK(fitted.link(LinkClass::nvlink).alpha_s == Approx(truth.alpha_s).epsilon(0.02));
  CHECK(fitted.link(LinkClass::nvlink).flow_cap_bytes_per_s == truth.beta_bytes_per_s);
  // The efficiency shape is the microbenchmarks'; only the level moves.
  CHECK(fitted.forward.at(128).points == profile.forward.at(128).points);
  // The fitted profile predicts every synthetic compute op.
  const ComputeModel model(runs[1].plan, fitted);
  const auto& program = runs[1].plan.programs[0];
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind != OpKind::compute) continue;
    const OpTiming& t = runs[1].ops[0][static_cast<std::size_t>(i)];
    CHECK(model.compute_time_s(program, i) == Approx(ps_to_s(t.end_ps - t.start_ps)).epsilon(0.02));
  }
}

TEST_CASE("calibration: the run fit divides out the sharing of more ranks than cores") {
  CalibrationProfile profile = base_profile();
  profile.compute_cores = 2.0;
  const Truth truth;
  std::vector<MeasuredRun> runs;
  for (std::int64_t chunk : {256, 1024})
    runs.push_back(synthetic_run(chunk, 4, profile, truth, 2.0));
  const calibration::RunFit fit = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(fit.compute.slope == Approx(truth.scale).epsilon(0.02));
  CHECK(fit.compute.intercept == Approx(truth.overhead_s).epsilon(0.02));
}

TEST_CASE("calibration: descheduled ops and stalled transfers do not move the run fit") {
  const CalibrationProfile profile = base_profile();
  const Truth truth;
  std::vector<MeasuredRun> runs;
  for (std::int64_t chunk : {256, 512, 1024})
    runs.push_back(synthetic_run(chunk, 2, profile, truth, 1.0));
  // One compute op of each run takes 3x longer, and one transfer of the first run 20x (the
  // host took the core).
  for (MeasuredRun& run : runs) {
    auto& ops = run.ops[1];
    const RankProgram& program = run.plan.programs[1];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (program.op(static_cast<int>(i)).kind == OpKind::compute) {
        ops[i].end_ps = ops[i].start_ps + 3 * (ops[i].end_ps - ops[i].start_ps);
        break;
      }
    }
    for (std::size_t i = 0; &run == &runs.front() && i < ops.size(); ++i) {
      if (program.op(static_cast<int>(i)).kind == OpKind::recv) {
        ops[i].end_ps = ops[i].start_ps + 20 * (ops[i].end_ps - ops[i].start_ps);
        break;
      }
    }
  }
  const calibration::RunFit fit = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(fit.compute.slope == Approx(truth.scale).epsilon(0.02));
  CHECK(fit.compute.intercept == Approx(truth.overhead_s).epsilon(0.02));
  CHECK(fit.transfer_alpha_s == Approx(truth.alpha_s).epsilon(0.02));
  // Ordinary least squares would be pulled far off by the same data.
  std::vector<calibration::Sample> line = {{1, 1}, {2, 2}, {3, 3}, {4, 40}, {5, 5}, {6, 6}};
  CHECK(calibration::fit_line_robust(line).slope == Approx(1.0));
  CHECK(calibration::fit_line(line).slope > 1.9);
}

TEST_CASE("calibration: a run fit of one size cannot separate scale from overhead") {
  const CalibrationProfile profile = base_profile();
  const std::vector<MeasuredRun> one_size = {synthetic_run(512, 2, profile, Truth{}, 1.0)};
  CHECK_THROWS_AS(calibration::fit_runs(one_size, profile, LinkClass::nvlink),
                  std::invalid_argument);
}
