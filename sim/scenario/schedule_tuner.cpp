#include "sim/scenario/schedule_tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string_view>

#include "sim/core/input_error.hpp"
#include "sim/job/job_simulation.hpp"
#include "sim/model/simulator.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/job_scenario.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/scenario/tune_search.hpp"
#include "sim/schedules/mesh_schedule.hpp"
#include "sim/schedules/mesh_tile.hpp"
#include "sim/topology/topology.hpp"

namespace tilesim {
namespace {

std::string bound_of(const std::map<std::pair<int, int>, double>& busy_ps, const Figures& f,
                     const Topology& topology) {
  if (f.exposed_comm_s_max < 0.1 * f.makespan_s) {
    // Compute bound; when one rank has much more work, the imbalance sets the pace.
    return f.compute_balance > 1.1 ? "imbalance" : "compute";
  }
  // The busiest route: the GPU pair with the most transfer-seconds.
  if (busy_ps.empty()) return "compute";
  const auto busiest =
      std::max_element(busy_ps.begin(), busy_ps.end(),
                       [](const auto& x, const auto& y) { return x.second < y.second; });
  Router router(topology);
  LinkClass slowest = LinkClass::nvlink;
  double slowest_bw = -1.0;
  for (LinkId l : router.route(busiest->first.first, busiest->first.second).links) {
    const Link& link = topology.link(l);
    if (slowest_bw < 0 || link.bandwidth_bytes_per_s < slowest_bw) {
      slowest = link.cls;
      slowest_bw = link.bandwidth_bytes_per_s;
    }
  }
  return std::string(to_string(slowest));
}

}  // namespace

std::vector<int> usp_degrees(const AttentionShape& shape, int gpus) {
  std::vector<int> out;
  for (int u = 2; u < gpus; ++u) {
    const bool kv_split = shape.kv_heads % u == 0 || u % shape.kv_heads == 0;
    if (gpus % u == 0 && shape.heads % u == 0 && kv_split) out.push_back(u);
  }
  return out;
}

std::vector<int> double_ring_inner_sizes(int gpus) {
  std::vector<int> out;
  for (int k = 2; k < gpus; ++k) {
    if (gpus % k == 0) out.push_back(k);
  }
  return out;
}

std::vector<ScheduleCandidate> tune_candidates(const AttentionShape& shape,
                                               const ScheduleSpec& base, bool mesh_only) {
  std::vector<ScheduleCandidate> out;
  if (!mesh_only) {
    for (const char* kind : kScheduleKinds) {
      const std::string_view name(kind);
      if (name == "mesh") continue;
      ScheduleSpec spec = base;
      spec.kind = kind;
      const std::vector<int> degrees = name == "usp"           ? usp_degrees(shape, base.gpus)
                                       : name == "double_ring" ? double_ring_inner_sizes(base.gpus)
                                                               : std::vector<int>{};
      if (degrees.empty()) {  // one candidate, the generator's own choice of degree
        spec.ulysses_degree = 0;
        spec.inner_ring = 0;
        out.push_back({kind, spec});
        continue;
      }
      for (const int d : degrees) {
        (name == "usp" ? spec.ulysses_degree : spec.inner_ring) = d;
        out.push_back({fmt::format("{}:{}{}", kind, name == "usp" ? "u" : "inner", d), spec});
      }
    }
  }
  for (const MeshTile& t : mesh_tiles(base.gpus)) {
    for (const char* placement : {"node-major", "kv-group-major"}) {
      ScheduleSpec spec = base;
      spec.kind = "mesh";
      spec.tile_a = t.a;
      spec.tile_b = t.b;
      spec.tile_choice = MeshTileChoice::given;
      spec.placement = placement;
      out.push_back({fmt::format("mesh:{}x{}/{}", t.a, t.b, placement), spec});
    }
  }
  return out;
}

std::string candidate_refusal(const PreparedScenario& p, const ScheduleCandidate& c) {
  Scenario candidate = p.scenario;
  candidate.schedule = c.spec;
  return to_string(plan_resources_refusal(candidate));
}

CandidateResult evaluate_candidate(const PreparedScenario& p, const ScheduleCandidate& c,
                                   Picoseconds stop_after_ps, const CandidateRun* decided) {
  CandidateResult r;
  r.candidate = c;
  if (p.job_layout || c.spec.memory_budget_bytes > 0) stop_after_ps = kNeverStop;
  // A stopped run: no figures, only the time it reached.
  auto cut_off = [&r](const SimulationResult& result) {
    if (result.stopped_at_ps < 0) return false;
    r.cut_off = true;
    r.makespan_floor_s = ps_to_s(result.stopped_at_ps);
    r.sim_wall_s = result.sim_wall_s;
    r.reason = "cut off";
    return true;
  };
  try {
    // As `simulate` would run it, under the same guard (candidate_run.hpp).
    std::optional<CandidateRun> decided_here;
    const CandidateRun& run =
        decided != nullptr ? *decided : decided_here.emplace(decide_candidate_run(p, c));
    r.reason = to_string(run.refusal);
    r.over_limits = !r.reason.empty();
    if (r.over_limits) return r;
    if (run.symmetry) {  // one rank per class, exact to the picosecond unless by roles
      r.approximate = run.symmetry->approximate();
      // Generated as it runs where `simulate` does that (the ring family's and USP's forward:
      // the guard sized it so), else the quotient built whole.
      const std::unique_ptr<ProgramSource> source = symmetric_source(run.scenario, *run.symmetry);
      const SimulationResult result =
          source ? simulate_classes_windowed(*source, *run.symmetry, p.topology, p.profile, true,
                                             stop_after_ps)
                 : simulate_classes(build_symmetric_plan(run.scenario, *run.symmetry),
                                    *run.symmetry, p.topology, p.profile, true, stop_after_ps);
      if (cut_off(result)) return r;
      r.figures = summarize(result);
      r.bound = bound_of(result.route_busy_ps, r.figures, p.topology);
      r.sim_wall_s = result.sim_wall_s;
    } else if (run.lazy) {
      const std::unique_ptr<ProgramSource> source = make_lazy_source(run.scenario);
      SimulationOptions options;
      options.record_route_busy = true;  // bound_of finds the busiest route from them
      options.stop_after_ps = stop_after_ps;
      const SimulationResult result = simulate_windowed(*source, p.topology, p.profile, options);
      if (cut_off(result)) return r;
      r.figures = summarize(result);
      r.bound = bound_of(result.route_busy_ps, r.figures, p.topology);
      r.sim_wall_s = result.sim_wall_s;
    } else if (p.job_layout) {  // every candidate runs as the job's CP groups, all at once
      const Plan plan = make_plan(p.scenario.attention, c.spec);
      Scenario candidate = p.scenario;
      candidate.schedule = c.spec;
      JobOptions options = job_options(candidate);
      options.top_links = 0;
      options.record_route_busy = true;  // bound_of finds the busiest route from them
      const JobRun job = simulate_job(plan, *p.job_layout, p.topology, p.profile, options);
      if (!job.refusal.empty()) {
        r.reason = "job.gpus: " + job.refusal;
        r.over_limits = true;
        return r;
      }
      r.figures = summarize(job.job);
      r.bound = bound_of(job.job.route_busy_ps, r.figures, p.topology);
      r.sim_wall_s = job.job.sim_wall_s;
      r.job_slowdown = job.slowdown;
    } else {
      const Plan plan = make_plan(p.scenario.attention, c.spec);
      SimulationOptions options;
      options.record_route_busy = true;  // bound_of finds the busiest route from them
      options.stop_after_ps = stop_after_ps;
      const SimulationResult result = simulate(plan, p.topology, p.profile, options);
      if (cut_off(result)) return r;
      r.figures = summarize(result);
      r.bound = bound_of(result.route_busy_ps, r.figures, p.topology);
      r.sim_wall_s = result.sim_wall_s;
    }
    r.reason =
        memory_budget_violation(c.spec, p.scenario.attention, r.figures.peak_memory_bytes_max);
    if (!r.reason.empty()) r.reason = "schedule.memory_budget: " + r.reason;
    r.ok = r.reason.empty();
  } catch (const ScheduleError& e) {
    r.reason = fmt::format("{}: {}", e.key(), e.what());
  }
  return r;
}

std::vector<CandidateResult> tune_schedules(const PreparedScenario& p, bool mesh_only) {
  std::vector<CandidateResult> all;
  for (const ScheduleCandidate& c :
       tune_candidates(p.scenario.attention, p.scenario.schedule, mesh_only)) {
    all.push_back(evaluate_candidate(p, c));
  }
  rank_candidates(all);
  return all;
}

void rank_candidates(std::vector<CandidateResult>& results) {
  std::stable_sort(results.begin(), results.end(),
                   [](const CandidateResult& x, const CandidateResult& y) {
                     if (x.ok != y.ok) return x.ok;
                     return x.ok && x.figures.makespan_s < y.figures.makespan_s;
                   });
}

void resolve_mesh_tile(PreparedScenario& p) {
  ScheduleSpec& spec = p.scenario.schedule;
  if (spec.kind != "mesh" || spec.tile_choice == MeshTileChoice::given) return;
  if (spec.tile_choice == MeshTileChoice::min_bytes) {
    const MeshTile t = fewest_bytes_tile(p.scenario.attention, spec.gpus);
    spec.tile_a = t.a;
    spec.tile_b = t.b;
    spec.tile_choice = MeshTileChoice::given;
    return;
  }
  // Branch and bound for the fastest one (tune_search.hpp): the same tile as tune_schedules.
  std::vector<CandidateResult> ranked =
      search_candidates(p, tune_candidates(p.scenario.attention, p.scenario.schedule, true), 1);
  rank_candidates(ranked);
  if (ranked.empty() || !ranked.front().ok) {
    throw p.scenario.error_at("schedule.tile", ranked.empty()
                                                   ? std::string("no mesh tile for this GPU count")
                                                   : "no mesh tile fits: " + ranked.front().reason);
  }
  spec = ranked.front().candidate.spec;
  // A tile the guard left out is not ruled out by a run: say so where its bound (-1 where none
  // was computed, e.g. in a job) leaves room for it to be faster than the tile chosen.
  const double chosen_s = ranked.front().figures.makespan_s;
  std::vector<std::string> open;
  for (const CandidateResult& r : ranked) {
    if (r.over_limits && r.lower_bound_s < chosen_s) open.push_back(r.candidate.label);
  }
  if (!open.empty()) {
    p.tile_warning = fmt::format(
        "tile: auto chose {} ({:.6g} s), the fastest of the tiles within the limits; {} over "
        "them, ruled out by no run and no bound, might be faster ({}{}): raise --max-memory "
        "or --max-ops to compare",
        ranked.front().candidate.label, chosen_s, open.size(), open.front(),
        open.size() > 1 ? ", ..." : "");
  }
}

}  // namespace tilesim
