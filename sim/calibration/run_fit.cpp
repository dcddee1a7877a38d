#include "sim/calibration/run_fit.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "sim/model/compute_model.hpp"

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

// The k-th send a->b matches the k-th recv b<-a (plan.hpp).
void add_transfer_samples(const MeasuredRun& run, std::vector<Sample>& out) {
  std::map<std::pair<int, int>, std::vector<int>> sends, recvs;  // (src, dst) -> op indices
  for (int r = 0; r < run.plan.ranks; ++r) {
    const RankProgram& program = run.plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind == OpKind::send) sends[{r, op.peer}].push_back(i);
      if (op.kind == OpKind::recv) recvs[{op.peer, r}].push_back(i);
    }
  }
  for (const auto& [link, send_ops] : sends) {
    const auto it = recvs.find(link);
    if (it == recvs.end()) continue;
    const auto& src = run.ops.at(static_cast<std::size_t>(link.first));
    const auto& dst = run.ops.at(static_cast<std::size_t>(link.second));
    const RankProgram& sender = run.plan.programs[static_cast<std::size_t>(link.first)];
    for (std::size_t k = 0; k < std::min(send_ops.size(), it->second.size()); ++k) {
      const OpTiming& s = src.at(static_cast<std::size_t>(send_ops[k]));
      const OpTiming& d = dst.at(static_cast<std::size_t>(it->second[k]));
      if (s.start_ps < 0 || d.start_ps < 0 || d.end_ps < 0) continue;
      const Picoseconds both_posted = std::max(s.start_ps, d.start_ps);
      if (d.end_ps <= both_posted) continue;
      const double bytes = run.plan.object(sender.reads(send_ops[k])[0]).bytes;
      out.push_back({bytes, seconds(d.end_ps - both_posted)});
    }
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
