#include "sim/verbs/compare_verb.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "sim/core/input_error.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/verbs/schedule_list.hpp"

namespace tilesim {
namespace {

double received_bytes(const Plan& plan, const RankProgram& program) {
  double bytes = 0.0;
  for (int i = program.first_index(); i < static_cast<int>(program.size()); ++i) {
    if (program.op(i).kind == OpKind::recv) bytes += plan.object(program.writes(i)[0]).bytes;
  }
  return bytes;
}

// Bytes received per rank (max) by the ring for this shape and pass: the reference of the
// "vs ring" column. Where the lazy source generates the ring's plan (lazy_plan.hpp: forward,
// not balance: work), from rank 0's program alone, O(P) ops: the ring's equal contiguous chunks
// travel the same n - 1 hops past every rank (ring_passes.hpp), so every rank receives the
// same bytes (tests/test_lazy_plan.cpp checks it against the whole plan). Else from the whole
// ring plan, which the guard must let be built.
double ring_bytes_received(const Scenario& scenario) {
  Scenario ring_scenario = scenario;
  ring_scenario.schedule.kind = "ring";
  if (lazy_generates(ring_scenario)) {
    const std::unique_ptr<ProgramSource> source = make_lazy_source(ring_scenario);
    while (source->extend(0)) {
    }
    return received_bytes(source->plan(), source->plan().programs[0]);
  }
  const std::string too_big =
      resource_violation(ring_scenario.attention, ring_scenario.schedule, ring_scenario.limits);
  if (!too_big.empty()) throw ring_scenario.error_at("schedule.gpus", too_big);
  const Plan ring = make_plan(ring_scenario.attention, ring_scenario.schedule);
  double max_bytes = 0.0;
  for (const RankProgram& program : ring.programs) {
    max_bytes = std::max(max_bytes, received_bytes(ring, program));
  }
  return max_bytes;
}

}  // namespace

nlohmann::ordered_json compare_document(const ScenarioSource& source, const std::string& schedules,
                                        bool include_wall_clock, const ProgressFn& progress) {
  const PreparedScenario p = prepare_scenario(source);
  const std::vector<ScheduleCandidate> list = parse_schedule_list(schedules, p.scenario.schedule);
  double ring_bytes = 0.0;
  try {
    ring_bytes = ring_bytes_received(p.scenario);
  } catch (const ScheduleError& e) {
    // The ring cannot lay the sequence out (e.g. seq_len not divisible into P blocks): the
    // scenario's input error, as `simulate` reports it, not an internal error.
    throw p.scenario.error_at(e.key(), e.what());
  }
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> left_out;
  for (ScheduleCandidate c : list) {
    CandidateResult r;
    r.candidate = c;
    std::string tile_warning;
    try {
      if (c.spec.kind == "mesh" && c.spec.tile_choice != MeshTileChoice::given) {
        PreparedScenario q = p;
        q.scenario.schedule = c.spec;
        resolve_mesh_tile(q);
        c.spec = q.scenario.schedule;
        tile_warning = q.tile_warning;
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
    if (tile_warning.empty()) {
      tile_warning = allgather_kv_cost_warning(c.spec, p.scenario.attention);
    }
    if (!tile_warning.empty()) row["warning"] = tile_warning;
    if (progress) progress(rows.size() + 1, list.size());
    if (!r.ok) {
      left_out.push_back(fmt::format("  {}: {}", c.label, r.reason));
      row["left_out"] = r.reason;
      rows.push_back(row);
      continue;
    }
    const Figures& f = r.figures;
    row["comm_bytes_per_rank_max"] = f.comm_bytes_per_rank_max;
    row["bytes_vs_ring"] = f.comm_bytes_per_rank_max / ring_bytes;
    row["makespan_s"] = f.makespan_s;
    row["exposed_comm_s_max"] = f.exposed_comm_s_max;
    row["overlap"] = f.overlap;
    row["peak_memory_bytes_max"] = f.peak_memory_bytes_max;
    row["compute_balance"] = f.compute_balance;
    row["speedup"] = f.speedup;
    row["bound"] = r.bound;
    if (p.job_layout) row["job_slowdown"] = r.job_slowdown;
    if (r.approximate) row["approximate"] = true;
    row["sim_wall_s"] = include_wall_clock ? r.sim_wall_s : 0.0;
    rows.push_back(row);
  }
  if (left_out.size() == list.size()) {
    throw InputError("--schedules", 0, "--schedules",
                     fmt::format("at least one schedule that can run here; every one was left "
                                 "out:\n{}",
                                 fmt::join(left_out, "\n")));
  }
  nlohmann::ordered_json doc;
  doc["scenario"] = p.scenario.name;
  doc["gpus"] = p.scenario.schedule.gpus;
  if (p.job_layout) {  // every candidate ran inside the job, all its CP groups at once
    doc["job_gpus"] = p.job_layout->gpus();
    doc["cp_groups"] = p.job_layout->cp_groups();
  }
  doc["ring_bytes_per_rank"] = ring_bytes;
  doc["schedules"] = rows;
  return doc;
}

}  // namespace tilesim
