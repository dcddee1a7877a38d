#include "sim/validation/timeline_comparison.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/units.hpp"

namespace tilesim::validation {
namespace {

double duration_s(const OpTiming& t) { return ps_to_s(t.end_ps - t.start_ps); }

bool ran(const OpTiming& t) { return t.start_ps >= 0 && t.end_ps >= t.start_ps; }

std::string summary_line(const char* what, const ErrorSummary& s) {
  return fmt::format("  {:<12} {:>5} median {:6.1f}%  p90 {:6.1f}%  max {:6.1f}%\n", what, s.count,
                     100.0 * s.median_abs, 100.0 * s.p90_abs, 100.0 * s.max_abs);
}

nlohmann::ordered_json summary_json(const ErrorSummary& s) {
  return {{"count", s.count},
          {"median_abs_rel_error", s.median_abs},
          {"p90_abs_rel_error", s.p90_abs},
          {"max_abs_rel_error", s.max_abs}};
}

}  // namespace

TimelineComparison compare_timelines(const Plan& plan,
                                     const std::vector<std::vector<OpTiming>>& measured,
                                     double measured_makespan_s, const SimulationResult& predicted,
                                     int worst_count) {
  TimelineComparison report;
  report.measured_makespan_s = measured_makespan_s;
  report.predicted_makespan_s = ps_to_s(predicted.makespan_ps);
  report.makespan_rel_error = relative_error(report.predicted_makespan_s, measured_makespan_s);
  std::vector<double> compute_errors, comm_errors, all_errors;
  std::vector<OpError> ops;
  for (int r = 0; r < plan.ranks; ++r) {
    const auto& m = measured[static_cast<std::size_t>(r)];
    const auto& p = predicted.ops[static_cast<std::size_t>(r)];
    Picoseconds m_end = 0, p_end = 0;
    for (std::size_t i = 0; i < m.size() && i < p.size(); ++i) {
      if (ran(m[i])) m_end = std::max(m_end, m[i].end_ps);
      if (ran(p[i])) p_end = std::max(p_end, p[i].end_ps);
      const OpKind kind = plan.programs[static_cast<std::size_t>(r)].op(static_cast<int>(i)).kind;
      if (kind == OpKind::free || !ran(m[i]) || !ran(p[i]) || m[i].end_ps == m[i].start_ps) {
        continue;
      }
      const bool comm = kind == OpKind::send || kind == OpKind::recv;
      OpError e{OpId{r, static_cast<int>(i)}, kind, comm ? ps_to_s(m[i].end_ps) : duration_s(m[i]),
                comm ? ps_to_s(p[i].end_ps) : duration_s(p[i]), 0.0};
      e.rel_error = relative_error(e.predicted_s, e.measured_s);
      (kind == OpKind::compute || kind == OpKind::merge ? compute_errors : comm_errors)
          .push_back(e.rel_error);
      all_errors.push_back(e.rel_error);
      ops.push_back(e);
    }
    report.rank_rel_errors.push_back(relative_error(ps_to_s(p_end), ps_to_s(m_end)));
  }
  report.ranks = summarize_errors(report.rank_rel_errors);
  report.compute_ops = summarize_errors(compute_errors);
  report.comm_ops = summarize_errors(comm_errors);
  report.all_ops = summarize_errors(all_errors);
  std::stable_sort(ops.begin(), ops.end(), [](const OpError& a, const OpError& b) {
    return std::abs(a.predicted_s - a.measured_s) > std::abs(b.predicted_s - b.measured_s);
  });
  if (static_cast<int>(ops.size()) > worst_count) ops.resize(static_cast<std::size_t>(worst_count));
  report.worst = std::move(ops);
  return report;
}

void print_report(std::ostream& out, const Plan& plan, const TimelineComparison& r) {
  out << fmt::format("makespan: measured {}, predicted {}, error {:+.1f}%\n",
                     format_time_s(r.measured_makespan_s), format_time_s(r.predicted_makespan_s),
                     100.0 * r.makespan_rel_error);
  out << "error distribution (|predicted - measured| / measured):\n";
  out << summary_line("rank end", r.ranks);
  out << summary_line("compute ops", r.compute_ops);
  out << summary_line("comm ops", r.comm_ops);  // by completion time
  out << summary_line("all ops", r.all_ops);
  out << "per rank end-time error:";
  for (double e : r.rank_rel_errors) out << fmt::format(" {:+.1f}%", 100.0 * e);
  out << "\nworst ops (largest time difference):\n";
  for (const OpError& e : r.worst) {
    out << fmt::format("  {:<48} measured {:>11} predicted {:>11} {:+7.1f}%{}\n",
                       plan.describe(e.id), format_time_s(e.measured_s),
                       format_time_s(e.predicted_s), 100.0 * e.rel_error,
                       e.kind == OpKind::send || e.kind == OpKind::recv ? " (completion)" : "");
  }
}

nlohmann::ordered_json report_to_json(const Plan& plan, const TimelineComparison& r) {
  nlohmann::ordered_json j;
  j["measured_makespan_s"] = r.measured_makespan_s;
  j["predicted_makespan_s"] = r.predicted_makespan_s;
  j["makespan_rel_error"] = r.makespan_rel_error;
  j["rank_end_rel_errors"] = r.rank_rel_errors;
  j["ranks"] = summary_json(r.ranks);
  j["compute_ops"] = summary_json(r.compute_ops);
  j["comm_ops"] = summary_json(r.comm_ops);
  j["all_ops"] = summary_json(r.all_ops);
  nlohmann::ordered_json worst = nlohmann::ordered_json::array();
  for (const OpError& e : r.worst) {
    worst.push_back({{"rank", e.id.rank},
                     {"index", e.id.index},
                     {"op", plan.describe(e.id)},
                     {"measured_s", e.measured_s},
                     {"predicted_s", e.predicted_s},
                     {"rel_error", e.rel_error}});
  }
  j["worst_ops"] = worst;
  return j;
}

}  // namespace tilesim::validation
