// The run fit (sim/calibration/run_fit.hpp) on synthetic timelines with known parameters:
// compute ops last stretch x (launch + scale x kernel), the launch overhead the profile's,
// transfers alpha + bytes / beta (beta = the profile's flow cap, which the fit keeps); the
// fit must recover scale and alpha within 2%, keep the launch overhead, ignore outliers, and
// write them into the profile. Stretches and clock shifts are checked on hand-made timelines.
// Tolerance: the 2% was set when the run fit was first written, before any result, and is
// unchanged here. The synthetic times are exact up to integer-picosecond rounding (relative
// error below 1e-9 at these durations), so the bound is loose on purpose: it fails a wrong
// estimator or a wrong stretch (off by 15% or a factor of 2 here), not rounding.
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
  double overhead_s = 300e-6;  // the profile's launch overhead: the fit keeps it
  double alpha_s = 120e-6;
  double beta_bytes_per_s = 3e9;
};

CalibrationProfile base_profile() {
  CalibrationProfile p = ideal_profile(20e9);
  p.launch_overhead_s = Truth{}.overhead_s;
  p.forward[128].points = {{256.0, 0.7}, {1024.0, 0.9}};
  LinkCost& shm = p.links[static_cast<std::size_t>(LinkClass::nvlink)];
  shm.alpha_s = 50e-6;
  shm.flow_cap_bytes_per_s = Truth{}.beta_bytes_per_s;
  return p;
}

// A ring run whose ops take exactly the true costs; `share` stretches computes as ranks that
// share cores would (every rank computes at the same instants, so the measured stretch is
// ranks / cores). Transfers: both sides post at the same instant, so the transfer is its
// duration.
MeasuredRun synthetic_run(std::int64_t chunk, int ranks, const CalibrationProfile& profile,
                          const Truth& truth, double share) {
  MeasuredRun run;
  run.plan = make_ring_plan(mha_shape(chunk * ranks), ranks);
  const ComputeModel model(run.plan, profile);
  for (int r = 0; r < ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    std::vector<OpTiming> ops(program.size());
    double clock_s = 1.0;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      double duration_s = 0.0;
      if (op.kind == OpKind::compute) {
        const double kernel_s = model.compute_time_s(program, i) - profile.launch_overhead_s;
        duration_s = share * (truth.overhead_s + truth.scale * kernel_s);
      } else if (op.kind == OpKind::send || op.kind == OpKind::recv) {
        const int object = op.kind == OpKind::send ? program.reads(i)[0] : program.writes(i)[0];
        duration_s = truth.alpha_s + run.plan.object(object).bytes / truth.beta_bytes_per_s;
        // Every rank posts comm group g at the same instant, so pairs start together, and
        // the computes after it start together too (no compute lasts 100 s).
        clock_s = 1.0 + 100.0 * op.comm_group;
      }
      ops[static_cast<std::size_t>(i)] = {s_to_ps(clock_s), s_to_ps(clock_s + duration_s)};
      if (op.kind == OpKind::compute) clock_s += duration_s;
    }
    run.ops.push_back(ops);
  }
  return run;
}

}  // namespace

TEST_CASE("calibration: the run fit recovers compute scale and alpha, and keeps the overhead") {
  const CalibrationProfile profile = base_profile();
  const Truth truth;
  std::vector<MeasuredRun> runs;
  for (std::int64_t chunk : {256, 512, 1024}) {
    runs.push_back(synthetic_run(chunk, 2, profile, truth, 1.0));
  }
  const calibration::RunFit fit = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(fit.compute.slope == Approx(truth.scale).epsilon(0.02));
  CHECK(fit.compute.intercept == 0.0);
  REQUIRE(fit.compute_samples.size() == 3 * 2 * 2);  // 3 runs, 2 ranks, 2 computes each
  CHECK(fit.compute_samples[0].stretch == 1.0);      // no cores in the profile: no sharing
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
  for (const calibration::ComputeSample& s : fit.compute_samples) {
    CHECK(s.stretch == Approx(2.0));  // 4 ranks computing at once on 2 cores
  }
  const CalibrationProfile fitted = calibration::apply_run_fit(profile, fit, LinkClass::nvlink);
  CHECK(fitted.launch_overhead_s == truth.overhead_s);
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
  CHECK(fit.transfer_alpha_s == Approx(truth.alpha_s).epsilon(0.02));
  // Ordinary least squares would be pulled far off by the same data.
  std::vector<calibration::Sample> line = {{1, 1}, {2, 2}, {3, 3}, {4, 40}, {5, 5}, {6, 6}};
  CHECK(calibration::fit_line_robust(line).slope == Approx(1.0));
  CHECK(calibration::fit_line(line).slope > 1.9);
}

TEST_CASE("calibration: one size is enough for the scale; no compute op is not") {
  const CalibrationProfile profile = base_profile();
  const std::vector<MeasuredRun> one_size = {synthetic_run(512, 2, profile, Truth{}, 1.0)};
  CHECK(calibration::fit_runs(one_size, profile, LinkClass::nvlink).compute.slope ==
        Approx(Truth{}.scale).epsilon(0.02));
  MeasuredRun never_ran = one_size.front();
  for (auto& rank : never_ran.ops) rank.assign(rank.size(), OpTiming{});
  CHECK_THROWS_AS(calibration::fit_runs({never_ran}, profile, LinkClass::nvlink),
                  std::invalid_argument);
}

namespace {

constexpr Picoseconds kMs = 1'000'000'000;

// A 2-rank ring whose ops never ran, but for rank r's first compute op at the given times.
MeasuredRun two_computes(Picoseconds start0, Picoseconds end0, Picoseconds start1,
                         Picoseconds end1) {
  MeasuredRun run;
  run.plan = make_ring_plan(mha_shape(1024), 2);
  const std::pair<Picoseconds, Picoseconds> times[2] = {{start0, end0}, {start1, end1}};
  for (int r = 0; r < 2; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    std::vector<OpTiming> ops(program.size());
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::compute) continue;
      ops[static_cast<std::size_t>(i)] = {times[r].first, times[r].second};
      break;
    }
    run.ops.push_back(ops);
  }
  return run;
}

int first_compute(const MeasuredRun& run, int rank) {
  const RankProgram& program = run.plan.programs[static_cast<std::size_t>(rank)];
  for (int i = 0; i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind == OpKind::compute) return i;
  }
  return -1;
}

}  // namespace

TEST_CASE("calibration: the measured stretch is the simulator's core share over the op") {
  // Rank 0 computes 0-10 ms, rank 1 0-5 ms. One core: rank 0 runs 5 ms at k = 2 (stretch 2)
  // and 5 ms alone (1): mean 1.5; rank 1 runs at k = 2 throughout: 2.
  MeasuredRun run = two_computes(0, 10 * kMs, 0, 5 * kMs);
  CHECK(calibration::measured_stretch(run, 0, first_compute(run, 0), 1.0) == Approx(1.5));
  CHECK(calibration::measured_stretch(run, 1, first_compute(run, 1), 1.0) == Approx(2.0));
  // 1.5 cores: k = 2 stretches by 4/3; rank 0: (5 x 4/3 + 5 x 1) / 10 = 7/6.
  CHECK(calibration::measured_stretch(run, 0, first_compute(run, 0), 1.5) == Approx(7.0 / 6.0));
  // Two cores, or no cores in the profile: no stretch.
  CHECK(calibration::measured_stretch(run, 0, first_compute(run, 0), 2.0) == Approx(1.0));
  CHECK(calibration::measured_stretch(run, 0, first_compute(run, 0), 0.0) == 1.0);
  // Ops that only touch (one ends as the other starts) do not overlap.
  run = two_computes(0, 4 * kMs, 4 * kMs, 8 * kMs);
  CHECK(calibration::measured_stretch(run, 1, first_compute(run, 1), 1.0) == Approx(1.0));
}

TEST_CASE("calibration: shifting to one clock moves each rank by its start after the first") {
  std::vector<std::vector<OpTiming>> ops = {{{0, 10}, {-1, -1}}, {{2, 5}}, {{0, 1}}};
  calibration::shift_to_one_clock(ops, {100, 40, 45});
  CHECK(ops[0][0].start_ps == 60);
  CHECK(ops[0][0].end_ps == 70);
  CHECK(ops[0][1].start_ps == -1);  // never ran: stays so
  CHECK(ops[0][1].end_ps == -1);
  CHECK(ops[1][0].start_ps == 2);  // the earliest start: unchanged
  CHECK(ops[1][0].end_ps == 5);
  CHECK(ops[2][0].start_ps == 5);
  CHECK(ops[2][0].end_ps == 6);
  CHECK_THROWS_AS(calibration::shift_to_one_clock(ops, {0, 0}), std::invalid_argument);
}

TEST_CASE("calibration: transfers are timed on one clock, not on each rank's own") {
  // Receivers post 1 ms before their senders. Rank 1 left the barrier 5 ms after rank 0, so
  // its own clock reads 5 ms less at every instant: compared as they are, its sends seem
  // posted 5 ms early, before rank 0's recvs, and those transfers seem 1 ms longer (the
  // transfers to rank 1 seem to end before they began and are dropped).
  const CalibrationProfile profile = base_profile();
  const Truth truth;
  constexpr Picoseconds skew = 5 * kMs;
  std::vector<MeasuredRun> runs;
  for (std::int64_t chunk : {256, 512, 1024}) {
    MeasuredRun run = synthetic_run(chunk, 2, profile, truth, 1.0);
    for (int r = 0; r < 2; ++r) {
      const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        OpTiming& t = run.ops[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
        if (program.op(i).kind == OpKind::recv) t.start_ps -= kMs;
        if (r == 1) {
          t.start_ps -= skew;
          t.end_ps -= skew;
        }
      }
    }
    runs.push_back(run);
  }
  const calibration::RunFit skewed = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(skewed.transfer_alpha_s > 5 * truth.alpha_s);
  for (MeasuredRun& run : runs) calibration::shift_to_one_clock(run.ops, {0, skew});
  const calibration::RunFit fit = calibration::fit_runs(runs, profile, LinkClass::nvlink);
  CHECK(fit.transfer_alpha_s == Approx(truth.alpha_s).epsilon(0.02));
}
