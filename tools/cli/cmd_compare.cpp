// tilesim compare SCENARIO --schedules ring,mesh:4x4,mesh:auto [--set k=v]... [--json]
// Simulates each schedule on the scenario and prints them side by side:
// bytes received per rank (and the reduction against ring's (P-1)*kv), makespan,
// exposed communication, overlap, peak memory, speedup over one GPU and what
// bounds it. A schedule that cannot run here is listed with the reason.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/schedules/schedule.hpp"
#include "tools/cli/cli_errors.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/schedule_list.hpp"
#include "tools/cli/table.hpp"

namespace tilesim::cli {
namespace {

struct CompareArgs {
  ScenarioArgs scenario;
  std::string schedules = "ring,mesh:auto";
};

// Bytes received per rank (max) by the ring for this shape and pass: the
// reference of the "vs ring" column.
double ring_bytes_received(const AttentionShape& shape, ScheduleSpec spec) {
  spec.kind = "ring";
  const Plan ring = make_plan(shape, spec);
  double max_bytes = 0.0;
  for (const RankProgram& program : ring.programs) {
    double bytes = 0.0;
    for (int i = 0; i < static_cast<int>(program.size()); ++i) {
      if (program.op(i).kind == OpKind::recv) bytes += ring.object(program.writes(i)[0]).bytes;
    }
    max_bytes = std::max(max_bytes, bytes);
  }
  return max_bytes;
}

std::string tile_of(const ScheduleSpec& s) {
  return s.kind == "mesh" ? fmt::format("{}x{} {}", s.tile_a, s.tile_b, s.placement) : "-";
}

int run_compare(const CompareArgs& args) {
  PreparedScenario p =
      prepare_scenario(args.scenario.path, args.scenario.sets, resource_limits(args.scenario));
  const std::vector<ScheduleCandidate> list =
      parse_schedule_list(args.schedules, p.scenario.schedule);
  const AttentionShape& shape = p.scenario.attention;
  const int gpus = p.scenario.schedule.gpus;
  const double ring_bytes = ring_bytes_received(shape, p.scenario.schedule);
  const bool in_job = p.job_layout.has_value();
  std::vector<std::string> columns{"schedule", "tile",         "bytes in/rank", "vs ring",
                                   "makespan", "exposed comm", "overlap",       "peak mem",
                                   "balance",  "speedup",      "bound"};
  if (in_job) columns.push_back("job slowdown");
  Table table(columns);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> left_out;
  for (ScheduleCandidate c : list) {
    CandidateResult r;
    r.candidate = c;
    try {
      if (c.spec.kind == "mesh" && c.spec.tile_choice != MeshTileChoice::given) {
        PreparedScenario q = p;
        q.scenario.schedule = c.spec;
        resolve_mesh_tile(q);
        c.spec = q.scenario.schedule;
      }
      r = evaluate_candidate(p, c);
    } catch (const InputError& e) {  // mesh:auto with no tile that fits: left out like others
      r.ok = false;
      r.reason = e.expected();
    }
    nlohmann::ordered_json row;
    row["schedule"] = c.label;
    row["kind"] = c.spec.kind;
    if (c.spec.kind == "mesh") {
      row["tile"] = {c.spec.tile_a, c.spec.tile_b};
      row["placement"] = c.spec.placement;
    }
    if (!r.ok) {
      left_out.push_back(fmt::format("  {}: {}", c.label, r.reason));
      row["left_out"] = r.reason;
      rows.push_back(row);
      continue;
    }
    const Figures& f = r.figures;
    std::vector<std::string> cells{
        c.label,
        tile_of(c.spec),
        format_bytes(f.comm_bytes_per_rank_max),
        fmt::format("{:+.1f}%", 100.0 * (f.comm_bytes_per_rank_max / ring_bytes - 1.0)),
        format_time_s(f.makespan_s),
        format_time_s(f.exposed_comm_s_max),
        fmt::format("{:.1f}%", 100 * f.overlap),
        format_bytes(f.peak_memory_bytes_max),
        fmt::format("{:.3f}", f.compute_balance),
        fmt::format("{:.1f}x", f.speedup),
        r.bound};
    if (in_job) cells.push_back(fmt::format("{:.4f}x", r.job_slowdown));
    table.add(cells);
    row["comm_bytes_per_rank_max"] = f.comm_bytes_per_rank_max;
    row["bytes_vs_ring"] = f.comm_bytes_per_rank_max / ring_bytes;
    row["makespan_s"] = f.makespan_s;
    row["exposed_comm_s_max"] = f.exposed_comm_s_max;
    row["overlap"] = f.overlap;
    row["peak_memory_bytes_max"] = f.peak_memory_bytes_max;
    row["compute_balance"] = f.compute_balance;
    row["speedup"] = f.speedup;
    row["bound"] = r.bound;
    if (in_job) row["job_slowdown"] = r.job_slowdown;
    row["sim_wall_s"] = args.scenario.no_wall_clock ? 0.0 : r.sim_wall_s;
    rows.push_back(row);
  }
  if (table.empty()) {
    throw InputError("--schedules", 0, "--schedules",
                     fmt::format("at least one schedule that can run here; every one was left "
                                 "out:\n{}",
                                 fmt::join(left_out, "\n")));
  }
  if (args.scenario.json) {
    nlohmann::ordered_json doc;
    doc["scenario"] = p.scenario.name;
    doc["gpus"] = gpus;
    if (in_job) {
      doc["job_gpus"] = p.job_layout->gpus();
      doc["cp_groups"] = p.job_layout->cp_groups();
    }
    doc["schedules"] = rows;
    fmt::print("{}\n", doc.dump(2));
  } else {
    fmt::print("compare {} on {} GPUs (ring bytes in/rank {})", p.scenario.name, gpus,
               format_bytes(ring_bytes));
    if (in_job) {
      fmt::print(", each inside a job of {} GPUs: {} CP groups at once", p.job_layout->gpus(),
                 p.job_layout->cp_groups());
    }
    fmt::print("\n{}", table.render());
    if (!left_out.empty()) fmt::print("left out:\n{}\n", fmt::join(left_out, "\n"));
  }
  return kExitOk;
}

}  // namespace

void add_compare(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* verb = app.add_subcommand("compare", "Simulate several schedules side by side");
  add_scenario_options(*verb, args->scenario);
  add_no_wall_clock_option(*verb, args->scenario);
  verb->add_option("--schedules", args->schedules,
                   "Comma-separated: all, a kind (ring, zigzag, ...), mesh:AxB, mesh:auto, "
                   "mesh:min-bytes, usp:U");
  verb->callback(
      [args, &exit_code] { exit_code = run_guarded([&] { return run_compare(*args); }); });
}

}  // namespace tilesim::cli
