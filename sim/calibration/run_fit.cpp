#include "sim/calibration/run_fit.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/model/compute_model.hpp"
#include "sim/plan/send_recv_pairs.hpp"

namespace tilesim::calibration {
namespace {

double seconds(Picoseconds ps) { return ps_to_s(ps); }

bool on_compute_stream(OpKind kind) { return kind == OpKind::compute || kind == OpKind::merge; }

bool ran(const OpTiming& t) { return t.start_ps >= 0 && t.end_ps >= t.start_ps; }

void add_compute_samples(std::size_t index, const MeasuredRun& run,
                         const CalibrationProfile& profile, std::vector<ComputeSample>& out) {
  const ComputeModel model(run.plan, profile);
  for (int r = 0; r < run.plan.ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    const auto& ops = run.ops.at(static_cast<std::size_t>(r));
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::compute) continue;
      const OpTiming& t = ops.at(static_cast<std::size_t>(i));
      if (!ran(t) || t.end_ps == t.start_ps) continue;
      ComputeSample s;
      s.run = index;
      s.rank = r;
      s.op = i;
      s.kernel_s = model.compute_time_s(program, i) - profile.launch_overhead_s;
      s.stretch = measured_stretch(run, r, i, profile.compute_cores);
      s.seconds = seconds(t.end_ps - t.start_ps);
      out.push_back(s);
    }
  }
}

// Transfer time from the later of the two posts to the recv's completion.
void add_transfer_samples(const MeasuredRun& run, std::vector<Sample>& out) {
  for (const auto& [send, recv] : send_recv_pairs(run.plan)) {
    const OpTiming& s =
        run.ops.at(static_cast<std::size_t>(send.rank)).at(static_cast<std::size_t>(send.index));
    const OpTiming& d =
        run.ops.at(static_cast<std::size_t>(recv.rank)).at(static_cast<std::size_t>(recv.index));
    if (s.start_ps < 0 || d.start_ps < 0 || d.end_ps < 0) continue;
    const Picoseconds both_posted = std::max(s.start_ps, d.start_ps);
    if (d.end_ps <= both_posted) continue;
    const RankProgram& receiver = run.plan.programs[static_cast<std::size_t>(recv.rank)];
    out.push_back(
        {run.plan.object(receiver.writes(recv.index)[0]).bytes, seconds(d.end_ps - both_posted)});
  }
}

}  // namespace

void shift_to_one_clock(std::vector<std::vector<OpTiming>>& ops,
                        const std::vector<Picoseconds>& clock_start) {
  if (clock_start.size() != ops.size()) {
    throw std::invalid_argument("shift_to_one_clock: one clock start per rank is needed");
  }
  if (clock_start.empty()) return;
  const Picoseconds earliest = *std::min_element(clock_start.begin(), clock_start.end());
  for (std::size_t r = 0; r < ops.size(); ++r) {
    const Picoseconds shift = clock_start[r] - earliest;
    for (OpTiming& t : ops[r]) {
      if (t.start_ps >= 0) t.start_ps += shift;
      if (t.end_ps >= 0) t.end_ps += shift;
    }
  }
}

double measured_stretch(const MeasuredRun& run, int rank, int index, double cores) {
  const OpTiming& self =
      run.ops.at(static_cast<std::size_t>(rank)).at(static_cast<std::size_t>(index));
  if (cores <= 0.0 || !ran(self) || self.end_ps == self.start_ps) return 1.0;
  // The compute-stream ops that overlap this one, and the instants where k(t) may change.
  std::vector<OpTiming> overlapping;
  std::vector<Picoseconds> cuts = {self.start_ps, self.end_ps};
  for (int r = 0; r < run.plan.ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    const auto& ops = run.ops.at(static_cast<std::size_t>(r));
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const OpTiming& t = ops.at(static_cast<std::size_t>(i));
      if (!on_compute_stream(program.op(i).kind) || !ran(t)) continue;
      if (t.end_ps <= self.start_ps || t.start_ps >= self.end_ps) continue;
      overlapping.push_back(t);
      if (t.start_ps > self.start_ps) cuts.push_back(t.start_ps);
      if (t.end_ps < self.end_ps) cuts.push_back(t.end_ps);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  double weighted = 0.0;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    if (cuts[c + 1] == cuts[c]) continue;
    int k = 0;
    for (const OpTiming& t : overlapping) {
      if (t.start_ps <= cuts[c] && t.end_ps >= cuts[c + 1]) ++k;
    }
    weighted += std::max(1.0, k / cores) * static_cast<double>(cuts[c + 1] - cuts[c]);
  }
  return weighted / static_cast<double>(self.end_ps - self.start_ps);
}

Sample compute_point(const ComputeSample& sample, double launch_overhead_s) {
  return {sample.stretch * sample.kernel_s, sample.seconds - sample.stretch * launch_overhead_s};
}

RunFit fit_runs(const std::vector<MeasuredRun>& runs, const CalibrationProfile& profile,
                LinkClass link) {
  RunFit fit;
  std::vector<Sample> transfers;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    add_compute_samples(i, runs[i], profile, fit.compute_samples);
    add_transfer_samples(runs[i], transfers);
  }
  std::vector<Sample> compute;
  for (const ComputeSample& s : fit.compute_samples) {
    compute.push_back(compute_point(s, profile.launch_overhead_s));
  }
  if (compute.empty()) throw std::invalid_argument("the runs hold no timed compute op");
  fit.compute = fit_scale_robust(compute);
  if (fit.compute.slope <= 0.0) {
    throw std::invalid_argument("the measured compute ops do not grow with their model time");
  }
  fit.transfer_samples = transfers;
  const double cap = profile.link(link).flow_cap_bytes_per_s;
  if (!transfers.empty() && cap > 0.0) {
    std::vector<double> excess;
    for (const Sample& s : transfers) excess.push_back(s.y - s.x / cap);
    fit.transfer_alpha_s = median(excess);
    fit.has_transfers = true;
  }
  return fit;
}

CalibrationProfile apply_run_fit(CalibrationProfile profile, const RunFit& fit, LinkClass link) {
  profile.peak_flops /= fit.compute.slope;
  if (fit.has_transfers) {
    LinkCost& cost = profile.links[static_cast<std::size_t>(link)];
    cost.alpha_s = std::max(cost.alpha_s, fit.transfer_alpha_s);
  }
  return profile;
}

}  // namespace tilesim::calibration
