#include "sim/report/html_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/report/link_utilisation.hpp"
#include "sim/report/svg_chart.hpp"
#include "sim/verbs/compare_verb.hpp"
#include "sim/verbs/simulate_verb.hpp"

namespace tilesim {
namespace {

using Json = nlohmann::ordered_json;

std::vector<int> default_gpus(int p) {
  std::vector<int> out;
  for (int g : {p / 4, p / 2, p}) {
    if (g >= 1 && (out.empty() || out.back() != g)) out.push_back(g);
  }
  return out;
}

std::string default_schedules(const ScheduleSpec& spec) {
  const std::string own = spec.kind == "mesh" ? "mesh:auto" : spec.kind;
  return own == "ring" ? "ring" : "ring," + own;
}

std::string speedup_section(const std::vector<int>& gpus, const std::vector<Json>& docs,
                            const std::vector<std::string>& labels) {
  std::vector<svg::Series> speedup, efficiency;
  for (const std::string& label : labels) {
    speedup.push_back({label, {}});
    efficiency.push_back({label, {}});
  }
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    if (docs[g].is_null()) continue;
    for (const Json& row : docs[g]["schedules"]) {
      if (row.contains("left_out")) continue;
      const auto at = std::find(labels.begin(), labels.end(), row["schedule"].get<std::string>());
      const auto i = static_cast<std::size_t>(at - labels.begin());
      const double s = row["speedup"];
      speedup[i].points.emplace_back(gpus[g], s);
      efficiency[i].points.emplace_back(gpus[g], s / gpus[g]);
    }
  }
  std::vector<double> ticks(gpus.begin(), gpus.end());
  svg::LineChartSpec a{
      "speedup", "Speedup over one GPU", "GPUs", "speedup over one GPU", true, false, true, ticks};
  svg::LineChartSpec b{"efficiency", "Parallel efficiency (speedup / GPUs)",
                       "GPUs",       "parallel efficiency",
                       true,         true,
                       false,        ticks};
  return "<section><h2>Speedup and efficiency against GPU count</h2>" +
         svg::line_chart(a, speedup) + svg::line_chart(b, efficiency) +
         "<p class=\"note\">Dashed: perfect speedup. Curves that coincide (ring and zigzag "
         "without a causal mask) show as a wider border under the later one. A missing point "
         "is a schedule that "
         "cannot run at that GPU count (see the notes below).</p></section>";
}

std::string timeline_section(const SimulationRun& run, int max_ranks) {
  const Plan& plan = run.full_plan();  // a trace run simulates every rank
  const SimulationResult& result = run.result;
  const int shown = std::min(plan.ranks, max_ranks);
  svg::LaneChartSpec spec;
  spec.id = "timeline";
  spec.title = fmt::format("Timeline of one step ({} pass), {} of {} GPUs",
                           to_string(plan.shape.pass), shown, plan.ranks);
  spec.x_label = "time (ms)";
  spec.y_label = "GPU (upper lane compute, lower comm)";
  spec.x_max = std::max(1e-12, ps_to_s(result.makespan_ps));
  spec.x_scale = 1e3;
  spec.legend = {{"compute", 0}, {"merge", 2}, {"transfer", 1}};
  for (int r = 0; r < shown; ++r) {
    spec.lane_names.push_back(fmt::format("GPU {}", r));
    spec.lane_names.push_back("");  // its comm lane, labelled with the pair
  }
  std::vector<svg::Box> boxes;
  for (int r = 0; r < shown; ++r) {
    const RankProgram& program = plan.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      const Op& op = program.op(i);
      if (op.kind != OpKind::compute && op.kind != OpKind::merge) continue;
      const OpTiming& t = result.ops[static_cast<std::size_t>(r)][static_cast<std::size_t>(i)];
      if (t.start_ps < 0) continue;
      boxes.push_back({ps_to_s(t.start_ps), ps_to_s(t.end_ps), 2 * r,
                       op.kind == OpKind::compute ? 0u : 2u,
                       fmt::format("{} ({})", plan.describe({r, i}),
                                   format_time_s(ps_to_s(t.end_ps - t.start_ps)))});
    }
  }
  for (const TransferRecord& t : result.transfers) {
    for (int r : {t.send.rank, t.recv.rank}) {
      if (r >= shown) continue;
      boxes.push_back({ps_to_s(t.posted_ps), ps_to_s(t.end_ps), 2 * r + 1, 1,
                       fmt::format("{} {} -> {}: {} in {}", plan.object(t.object).name, t.send.rank,
                                   t.recv.rank, format_bytes(t.bytes),
                                   format_time_s(ps_to_s(t.end_ps - t.posted_ps)))});
    }
  }
  return "<section><h2>Timeline of one step</h2>" + svg::lane_chart(spec, boxes) + "</section>";
}

std::string links_section(const SimulationRun& run) {
  constexpr int kBins = 200;
  const std::vector<ClassUtilisation> classes =
      link_utilisation(run.prepared.topology, run.result, kBins);
  const double span_ms = ps_to_s(run.result.makespan_ps) * 1e3;
  std::vector<svg::Series> series;
  for (const ClassUtilisation& c : classes) {
    svg::Series s{std::string(to_string(c.cls)), {}};
    for (std::size_t b = 0; b < c.bins.size(); ++b) {
      s.points.emplace_back((static_cast<double>(b) + 0.5) * span_ms / kBins, c.bins[b]);
    }
    series.push_back(std::move(s));
  }
  std::vector<double> ticks;
  for (int k = 0; k <= 5; ++k) ticks.push_back(std::round(span_ms * k / 5 * 100) / 100);
  svg::LineChartSpec spec{"links",     "Link utilisation per class (share of the class's capacity)",
                          "time (ms)", "utilisation",
                          false,       true,
                          false,       ticks};
  return "<section><h2>Link utilisation over time</h2>" + svg::line_chart(spec, series) +
         "<p class=\"note\">Each curve: the load on the class's links over the sum of their spec "
         "bandwidths, averaged over " +
         std::to_string(kBins) + " equal bins of the step.</p></section>";
}

std::string memory_section(const SimulationRun& run, int max_ranks) {
  const auto& ranks = run.result.ranks;
  const std::size_t shown = std::min(ranks.size(), static_cast<std::size_t>(max_ranks));
  std::vector<int> kinds;  // tensor kinds present at some rank's peak
  for (int t = 0; t < kTensorKinds; ++t) {
    for (std::size_t r = 0; r < shown; ++r) {
      if (ranks[r].peak_breakdown[static_cast<std::size_t>(t)] > 0) {
        kinds.push_back(t);
        break;
      }
    }
  }
  svg::BarChartSpec spec;
  spec.id = "memory";
  spec.title = fmt::format("Peak memory per rank, by tensor ({} of {} ranks)", shown, ranks.size());
  spec.x_label = "rank";
  spec.y_label = "GiB at the rank's peak";
  std::vector<std::vector<double>> bars;
  for (int t : kinds) spec.legend.emplace_back(to_string(static_cast<Tensor>(t)));
  for (std::size_t r = 0; r < shown; ++r) {
    spec.bar_names.push_back(std::to_string(r));
    std::vector<double> bar;
    for (int t : kinds) {
      bar.push_back(ranks[r].peak_breakdown[static_cast<std::size_t>(t)] / (1024.0 * 1024 * 1024));
    }
    bars.push_back(std::move(bar));
  }
  return "<section><h2>Peak memory per rank</h2>" + svg::stacked_bar_chart(spec, bars) +
         "</section>";
}

std::string compare_section(const Json& doc) {
  std::string out = fmt::format(
      "<section><h2>Schedules compared on {} GPUs</h2><table id=\"compare\"><thead><tr>"
      "<th>schedule</th><th>tile</th><th>bytes in/rank</th><th>vs ring</th><th>makespan</th>"
      "<th>exposed comm</th><th>overlap</th><th>peak mem</th><th>speedup</th><th>bound</th>"
      "</tr></thead><tbody>",
      doc["gpus"].get<int>());
  std::string left_out;
  for (const Json& row : doc["schedules"]) {
    const std::string label = svg::escape(row["schedule"]);
    if (row.contains("left_out")) {
      left_out += fmt::format("<li>{}: {}</li>", label, svg::escape(row["left_out"]));
      continue;
    }
    const std::string tile =
        row["kind"] == "mesh"
            ? fmt::format("{}x{} {}", row["tile"][0].get<int>(), row["tile"][1].get<int>(),
                          row["placement"].get<std::string>())
            : "-";
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{:+.1f}%</td><td>{}</td><td>{}</td>"
        "<td>{:.1f}%</td><td>{}</td><td>{:.1f}x</td><td>{}</td></tr>",
        label, tile, format_bytes(row["comm_bytes_per_rank_max"]),
        100.0 * (row["bytes_vs_ring"].get<double>() - 1.0), format_time_s(row["makespan_s"]),
        format_time_s(row["exposed_comm_s_max"]), 100.0 * row["overlap"].get<double>(),
        format_bytes(row["peak_memory_bytes_max"]), row["speedup"].get<double>(),
        svg::escape(row["bound"]));
  }
  out += "</tbody></table>";
  if (!left_out.empty()) out += "<p>Left out:</p><ul>" + left_out + "</ul>";
  return out + "</section>";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1500px}"
    "svg.chart{display:inline-block;margin:6px;background:#fff}"
    "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right}th{background:#f3f3f3}.note{color:#666;font-size:13px}";

}  // namespace

std::string report_html(const ScenarioSource& source, const ReportOptions& options,
                        const ProgressFn& progress) {
  const PreparedScenario base = prepare_scenario(source);
  const int p = base.scenario.schedule.gpus;
  const std::vector<int> gpus = options.gpus.empty() ? default_gpus(p) : options.gpus;
  const std::string schedules =
      options.schedules.empty() ? default_schedules(base.scenario.schedule) : options.schedules;
  const std::size_t steps = gpus.size() + 2;
  std::size_t done = 0;
  auto step = [&] {
    if (progress) progress(++done, steps);
  };

  std::vector<Json> docs;
  std::vector<std::string> labels, notes;
  for (int g : gpus) {
    try {
      docs.push_back(
          compare_document(source.with(fmt::format("schedule.gpus={}", g)), schedules, false));
      if (labels.empty()) {
        for (const Json& row : docs.back()["schedules"]) labels.push_back(row["schedule"]);
      }
      for (const Json& row : docs.back()["schedules"]) {
        if (row.contains("left_out")) {
          notes.push_back(fmt::format("{} on {} GPUs: {}", row["schedule"].get<std::string>(), g,
                                      row["left_out"].get<std::string>()));
        }
      }
    } catch (const InputError& e) {
      docs.emplace_back(nullptr);
      notes.push_back(fmt::format("{} GPUs: {}", g, e.expected()));
    }
    step();
  }
  const auto own = std::find(gpus.begin(), gpus.end(), p);
  const Json compare =
      own != gpus.end() && !docs[static_cast<std::size_t>(own - gpus.begin())].is_null()
          ? docs[static_cast<std::size_t>(own - gpus.begin())]
          : compare_document(source, schedules, false);
  if (labels.empty()) {
    for (const Json& row : compare["schedules"]) labels.push_back(row["schedule"]);
  }
  step();
  const SimulationRun run = run_simulation(source, SimulateRequest{.trace = true});
  const Figures f = summarize(run.result);
  step();

  const Scenario& s = run.prepared.scenario;
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>tilesim report: {}</title><style>{}</style></head><body>"
      "<h1>tilesim report: {}</h1><p class=\"summary\">{} on {} GPUs of {} ({}), {} tokens, {}, "
      "{}: makespan {}, speedup {:.2f}x over one GPU, parallel efficiency {:.1f}%, exposed "
      "communication {}, peak memory {} per rank.</p>",
      svg::escape(s.name), kStyle, svg::escape(s.name), svg::escape(run.full_plan().schedule),
      run.full_plan().ranks, svg::escape(run.prepared.topology.name),
      svg::escape(run.prepared.topology.gpu_model), format_tokens(s.attention.seq_len),
      to_string(s.attention.pass), s.attention.causal ? "causal" : "non-causal",
      format_time_s(f.makespan_s), f.speedup, 100 * f.efficiency,
      format_time_s(f.exposed_comm_s_max), format_bytes(f.peak_memory_bytes_max));
  html += speedup_section(gpus, docs, labels);
  html += timeline_section(run, options.timeline_ranks);
  html += links_section(run);
  html += memory_section(run, options.memory_ranks);
  html += compare_section(compare);
  if (!notes.empty()) {
    html += "<section><h2>Notes</h2><ul id=\"notes\">";
    for (const std::string& n : notes) html += "<li>" + svg::escape(n) + "</li>";
    html += "</ul></section>";
  }
  html +=
      "<footer class=\"note\">Written by tilesim report; every figure is simulated.</footer>"
      "</body></html>\n";
  return html;
}

}  // namespace tilesim
