#include "sim/verbs/tune_verb.hpp"

#include <fmt/format.h>

#include <utility>

#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/tune_search.hpp"
#include "sim/schedules/allgather_kv_schedule.hpp"

namespace tilesim {
namespace {

// A candidate's result as it travels between ranks. JSON numbers print the shortest text that
// reads back as the same double, so the figures survive the trip bit for bit.
nlohmann::ordered_json result_json(const CandidateResult& r) {
  const Figures& f = r.figures;
  return {{"ok", r.ok},
          {"reason", r.reason},
          {"bound", r.bound},
          {"sim_wall_s", r.sim_wall_s},
          {"job_slowdown", r.job_slowdown},
          {"approximate", r.approximate},
          {"figures",
           {f.makespan_s, f.single_gpu_s, f.speedup, f.efficiency, f.compute_s_max,
            f.exposed_comm_s_max, f.overlap, f.compute_balance, f.comm_bytes_total,
            f.comm_bytes_per_rank_max, f.peak_memory_bytes_max}}};
}

CandidateResult result_from_json(const ScheduleCandidate& c, const nlohmann::ordered_json& j) {
  CandidateResult r;
  r.candidate = c;
  r.ok = j["ok"];
  r.reason = j["reason"];
  r.bound = j["bound"];
  r.sim_wall_s = j["sim_wall_s"];
  r.job_slowdown = j["job_slowdown"];
  r.approximate = j["approximate"];
  const auto& v = j["figures"];
  Figures& f = r.figures;
  double* fields[] = {&f.makespan_s,
                      &f.single_gpu_s,
                      &f.speedup,
                      &f.efficiency,
                      &f.compute_s_max,
                      &f.exposed_comm_s_max,
                      &f.overlap,
                      &f.compute_balance,
                      &f.comm_bytes_total,
                      &f.comm_bytes_per_rank_max,
                      &f.peak_memory_bytes_max};
  for (std::size_t i = 0; i < std::size(fields); ++i) *fields[i] = v[i];
  return r;
}

}  // namespace

nlohmann::ordered_json tune_document(const ScenarioSource& source, int top, bool include_wall_clock,
                                     bool exhaustive, const ItemMap& map,
                                     const ProgressFn& progress) {
  const PreparedScenario p = prepare_scenario(source);
  const std::vector<ScheduleCandidate> candidates =
      tune_candidates(p.scenario.attention, p.scenario.schedule, false);
  std::vector<CandidateResult> ranked;
  if (exhaustive) {
    const std::vector<std::string> results = map(
        candidates.size(),
        [&](std::size_t i) {
          return guarded_item([&] { return result_json(evaluate_candidate(p, candidates[i])); });
        },
        progress);
    if (results.size() != candidates.size()) return nullptr;
    for (std::size_t i = 0; i < results.size(); ++i) {
      ranked.push_back(result_from_json(candidates[i], unwrap_item(results[i])));
    }
  } else {
    ranked = search_candidates(p, candidates, top, progress);
  }
  rank_candidates(ranked);

  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json left_out = nlohmann::ordered_json::array();
  nlohmann::ordered_json pruned = nlohmann::ordered_json::array();
  // Simulated (whole, or until known slower: cut off) but not among the fastest `top`.
  nlohmann::ordered_json outside_top = nlohmann::ordered_json::array();
  double wall_s = 0.0;
  for (const CandidateResult& r : ranked) {
    wall_s += r.sim_wall_s;
    if (r.cut_off) {  // its proven lower bound only
      outside_top.push_back(
          {{"schedule", r.candidate.label}, {"lower_bound_s", r.makespan_floor_s}});
      continue;
    }
    if (r.pruned) {
      pruned.push_back({{"schedule", r.candidate.label}, {"lower_bound_s", r.lower_bound_s}});
      continue;
    }
    if (!r.ok) {
      left_out.push_back({{"schedule", r.candidate.label}, {"reason", r.reason}});
      continue;
    }
    if (static_cast<int>(rows.size()) >= top) {
      outside_top.push_back(
          {{"schedule", r.candidate.label}, {"makespan_s", r.figures.makespan_s}});
      continue;
    }
    const Figures& f = r.figures;
    nlohmann::ordered_json row{{"schedule", r.candidate.label},
                               {"makespan_s", f.makespan_s},
                               {"comm_bytes_per_rank_max", f.comm_bytes_per_rank_max},
                               {"peak_memory_bytes_max", f.peak_memory_bytes_max},
                               {"exposed_comm_s_max", f.exposed_comm_s_max},
                               {"speedup", f.speedup},
                               {"bound", r.bound}};
    if (r.lower_bound_s >= 0) row["lower_bound_s"] = r.lower_bound_s;
    if (p.job_layout) row["job_slowdown"] = r.job_slowdown;
    if (r.approximate) row["approximate"] = true;
    if (std::string warning = allgather_kv_cost_warning(r.candidate.spec, p.scenario.attention);
        !warning.empty()) {
      row["warning"] = std::move(warning);
    }
    rows.push_back(row);
  }
  if (rows.empty()) {  // every candidate left out (nothing simulated, so nothing pruned)
    std::string reasons;
    for (const auto& row : left_out) {
      reasons += fmt::format("\n  {}: {}", row["schedule"].get<std::string>(),
                             row["reason"].get<std::string>());
    }
    throw p.scenario.error_at(
        "schedule", "at least one candidate that can run here; every one was left out:" + reasons);
  }
  nlohmann::ordered_json doc;
  doc["scenario"] = p.scenario.name;
  doc["gpus"] = p.scenario.schedule.gpus;
  if (p.job_layout) {  // every candidate ran inside the job, all its CP groups at once
    doc["job_gpus"] = p.job_layout->gpus();
    doc["cp_groups"] = p.job_layout->cp_groups();
  }
  doc["candidates"] = ranked.size();
  // Branch and bound unless asked (tune_search.hpp); a job's candidates are all simulated.
  doc["search"] = exhaustive || p.job_layout ? "exhaustive" : "branch-and-bound";
  doc["top"] = rows;
  doc["left_out"] = left_out;
  doc["pruned"] = pruned;
  doc["outside_top"] = outside_top;
  doc["sim_wall_s"] = include_wall_clock ? wall_s : 0.0;
  return doc;
}

}  // namespace tilesim
