#include "sim/calibration/run_fit.hpp"

#include <algorithm>
#include <stdexcept>

#include "sim/model/compute_model.hpp"
#include "sim/plan/send_recv_pairs.hpp"

namespace tilesim::calibration {
namespace {

double seconds(Picoseconds ps) { return ps_to_s(ps); }

void add_compute_samples(const MeasuredRun& run, const CalibrationProfile& profile,
                         std::vector<Sample>& out) {
  const ComputeModel model(run.plan, profile);
  // More ranks than cores: the model's fair share stretches each kernel by ranks / cores.
  const double share =
      profile.compute_cores > 0.0
          ? std::max(1.0, static_cast<double>(run.plan.ranks) / profile.compute_cores)
          : 1.0;
  for (int r = 0; r < run.plan.ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    const auto& ops = run.ops.at(static_cast<std::size_t>(r));
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind != OpKind::compute) continue;
      const OpTiming& t = ops.at(static_cast<std::size_t>(i));
      if (t.start_ps < 0 || t.end_ps < t.start_ps) continue;
      const double kernel_s = model.compute_time_s(program, i) - profile.launch_overhead_s;
      out.push_back({kernel_s * share, seconds(t.end_ps - t.start_ps)});
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

RunFit fit_runs(const std::vector<MeasuredRun>& runs, const CalibrationProfile& profile,
                LinkClass link) {
  std::vector<Sample> compute, transfers;
  for (const MeasuredRun& run : runs) {
    add_compute_samples(run, profile, compute);
    add_transfer_samples(run, transfers);
  }
  RunFit fit;
  fit.compute = fit_line_robust(compute);
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
  profile.launch_overhead_s = std::max(0.0, fit.compute.intercept);
  if (fit.has_transfers) {
    LinkCost& cost = profile.links[static_cast<std::size_t>(link)];
    cost.alpha_s = std::max(cost.alpha_s, fit.transfer_alpha_s);
  }
  return profile;
}

}  // namespace tilesim::calibration
