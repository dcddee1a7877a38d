// How tune and compare run a candidate (sim/scenario/candidate_run.hpp): as `simulate` runs the
// same scenario, under the same guard. Until 2026-12 tune refused every candidate whose whole
// plan passed the limits before it looked for a symmetry, so on 16384 GPUs it left out the ring
// that `simulate` runs in a second. Here, on 512 GPUs, a memory limit between the ring's whole
// plan and its quotient plays that part.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/core/units.hpp"
#include "sim/model/makespan_bound.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/scenario/tune_search.hpp"
#include "sim/schedules/ring_classes_source.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

}  // namespace

TEST_CASE("a candidate runs on its quotient where the whole plan is over the limits") {
  PreparedScenario p = prepare_scenario(kScenario, {"schedule.gpus=512", "schedule.kind=ring"});
  REQUIRE(p.symmetry.has_value());
  REQUIRE(p.symmetry->exact());
  const int classes = p.symmetry->classes;
  const double whole_bytes = estimate_plan(p.scenario.attention, p.scenario.schedule).memory_bytes;
  const double quotient_bytes = estimate_symmetric_plan(p.scenario.attention, p.scenario.schedule,
                                                        classes, kWindowedOpsPerClass)
                                    .memory_bytes;
  REQUIRE(whole_bytes > 2 * quotient_bytes);
  const ScheduleCandidate ring{"ring", p.scenario.schedule};
  // The figures of the quotient simulate runs, without a limit.
  const auto source = symmetric_ring_source(p.scenario, *p.symmetry);
  REQUIRE(source != nullptr);
  const SimulationResult expected =
      simulate_classes_windowed(*source, *p.symmetry, p.topology, p.profile);

  p.scenario.limits.max_memory_bytes = std::sqrt(whole_bytes * quotient_bytes);
  CHECK_FALSE(candidate_refusal(p, ring).empty());  // what tune refused it by before

  const CandidateRun before_search = decide_candidate_run(p, ring, /*search=*/false);
  CHECK(before_search.refusal.empty());
  CHECK_FALSE(before_search.searched);
  CHECK_FALSE(before_search.symmetry.has_value());

  const CandidateRun run = decide_candidate_run(p, ring);
  CHECK(run.refusal.empty());
  CHECK(run.searched);
  CHECK_FALSE(run.lazy);
  REQUIRE(run.symmetry.has_value());
  CHECK(run.symmetry->classes == classes);

  MakespanBound bound(p.topology, p.profile);
  const CandidateResult bounded = bound_candidate(p, ring, bound);
  REQUIRE(bounded.ok);
  const CandidateResult r = evaluate_candidate(p, ring);
  REQUIRE(r.ok);
  CHECK(r.figures.makespan_s == ps_to_s(expected.makespan_ps));
  CHECK(bounded.lower_bound_s <= r.figures.makespan_s);
}

TEST_CASE("a candidate whose quotient is over the limits is refused as simulate refuses it") {
  PreparedScenario p = prepare_scenario(kScenario, {"schedule.gpus=512", "schedule.kind=ring"});
  REQUIRE(p.symmetry.has_value());
  const double quotient_bytes = estimate_symmetric_plan(p.scenario.attention, p.scenario.schedule,
                                                        p.symmetry->classes, kWindowedOpsPerClass)
                                    .memory_bytes;
  // Above one class's needs (the check before the search passes), below the classes found.
  const double one_class_bytes =
      estimate_symmetric_plan(p.scenario.attention, p.scenario.schedule, 1, kWindowedOpsPerClass)
          .memory_bytes;
  REQUIRE(one_class_bytes < quotient_bytes);
  p.scenario.limits.max_memory_bytes = (one_class_bytes + quotient_bytes) / 2;
  const ScheduleCandidate ring{"ring", p.scenario.schedule};
  CHECK(decide_candidate_run(p, ring, /*search=*/false).refusal.empty());
  const CandidateRun run = decide_candidate_run(p, ring);
  CHECK(run.refusal.key == "schedule.gpus");
  CHECK(run.refusal.message.find(std::to_string(p.symmetry->classes) + " rank classes") !=
        std::string::npos);
  const CandidateResult r = evaluate_candidate(p, ring);
  CHECK_FALSE(r.ok);
  CHECK(r.reason == to_string(run.refusal));
  // The same limit through simulate's guard.
  Scenario s = p.scenario;
  CHECK_THROWS_AS(prepare_scenario(s, s.limits), InputError);
}

TEST_CASE("a mesh whose tile is searched is guarded by its tiles' quotients, not a whole plan") {
  // Until 2026-12 prepare_scenario checked the whole plan of the fewest-ops tile first, which
  // no tile search builds; with the mesh's references counted that refused `tile: auto` from
  // about 11,400 GPUs on a 24 GB machine, where each tile runs as a quotient.
  const std::vector<std::string> overrides{"schedule.gpus=1024", "schedule.kind=mesh"};
  const PreparedScenario free_run = prepare_scenario(kScenario, overrides);
  REQUIRE(free_run.symmetry.has_value());
  const ScheduleSpec& chosen = free_run.scenario.schedule;
  const Scenario searched = load_scenario(kScenario, overrides);
  REQUIRE(searched.schedule.tile_choice != MeshTileChoice::given);
  CHECK(searched_mesh_tiles_symmetric(searched));
  const double whole_bytes = estimate_plan(searched.attention, searched.schedule).memory_bytes;
  const double quotient_bytes =
      estimate_symmetric_plan(searched.attention, chosen, free_run.symmetry->classes, 0.0)
          .memory_bytes;
  REQUIRE(whole_bytes > 1.5 * quotient_bytes);

  ResourceLimits limits;
  limits.max_memory_bytes = std::sqrt(whole_bytes * quotient_bytes);
  Scenario limited = searched;
  limited.limits = limits;
  CHECK_THROWS_AS(check_plan_resources(limited), InputError);  // the check before
  const PreparedScenario p = prepare_scenario(kScenario, overrides, limits);
  CHECK(p.scenario.schedule.tile_a == chosen.tile_a);
  CHECK(p.scenario.schedule.tile_b == chosen.tile_b);
  // With symmetry off every tile would be a whole plan: the whole plan's guard, as before.
  std::vector<std::string> off = overrides;
  off.push_back("schedule.symmetry=off");
  CHECK_FALSE(searched_mesh_tiles_symmetric(load_scenario(kScenario, off)));
}

TEST_CASE("tile: auto warns when the guard left out a tile that might be faster") {
  const std::vector<std::string> overrides{"schedule.gpus=1024", "schedule.kind=mesh"};
  const PreparedScenario free_run = prepare_scenario(kScenario, overrides);
  REQUIRE(free_run.symmetry.has_value());
  CHECK(free_run.tile_warning.empty());
  // Just above what the chosen tile's quotient needs: it still runs, tiles needing more do not.
  ResourceLimits limits;
  limits.max_memory_bytes =
      1.001 * estimate_symmetric_plan(free_run.scenario.attention, free_run.scenario.schedule,
                                      free_run.symmetry->classes, 0.0)
                  .memory_bytes;
  const PreparedScenario p = prepare_scenario(kScenario, overrides, limits);
  CHECK(p.scenario.schedule.tile_a == free_run.scenario.schedule.tile_a);
  CHECK(p.scenario.schedule.tile_b == free_run.scenario.schedule.tile_b);
  CHECK(p.scenario.schedule.placement == free_run.scenario.schedule.placement);
  const double chosen_s = evaluate_candidate(p, {"chosen", p.scenario.schedule}).figures.makespan_s;
  // The search resolve_mesh_tile ran: the tiles over the limit, by their bounds.
  PreparedScenario searched = p;
  searched.scenario.schedule = load_scenario(kScenario, overrides).schedule;
  const std::vector<CandidateResult> all = search_candidates(
      searched, tune_candidates(searched.scenario.attention, searched.scenario.schedule, true), 1);
  int might_be_faster = 0, ruled_out = 0;
  for (const CandidateResult& r : all) {
    if (!r.over_limits) continue;
    REQUIRE(r.lower_bound_s >= 0);  // a refused mesh tile still gets its closed-form bound
    (r.lower_bound_s < chosen_s ? might_be_faster : ruled_out) += 1;
  }
  // The search prunes a tile whose bound is above the best before it would run (and refuse)
  // it, so here every refused tile might be faster; one its bound rules out is refused before
  // the search (one class over the limits), which this limit does not reach.
  REQUIRE(might_be_faster > 0);
  CHECK(ruled_out == 0);
  CHECK_THAT(p.tile_warning,
             Catch::Matchers::Contains("tile: auto chose mesh:16x64/kv-group-major") &&
                 Catch::Matchers::Contains(
                     fmt::format("; {} over them, ruled out by no run", might_be_faster)) &&
                 Catch::Matchers::Contains("raise --max-memory"));
}

TEST_CASE("a searched mesh is refused before the search where even one class does not fit") {
  const std::vector<std::string> overrides{"schedule.gpus=1024", "schedule.kind=mesh"};
  const Scenario searched = load_scenario(kScenario, overrides);
  ResourceLimits limits;
  limits.max_memory_bytes =
      0.9 * estimate_symmetric_plan(searched.attention, searched.schedule, 1, 0.0).memory_bytes;
  try {
    prepare_scenario(kScenario, overrides, limits);
    FAIL("not refused");
  } catch (const InputError& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::Matchers::Contains("key 'schedule.gpus'") &&
                   Catch::Matchers::Contains("with any number of rank classes"));
  }
  // With symmetry off each tile is a whole plan: refused by the whole plan's estimate, under a
  // limit a quotient would fit.
  std::vector<std::string> off = overrides;
  off.push_back("schedule.symmetry=off");
  const Scenario whole = load_scenario(kScenario, off);
  limits.max_memory_bytes = 0.9 * estimate_plan(whole.attention, whole.schedule).memory_bytes;
  CHECK_THROWS_WITH(prepare_scenario(kScenario, off, limits),
                    Catch::Matchers::Contains("of simulation (estimated from the shape"));
  CHECK_NOTHROW(prepare_scenario(kScenario, overrides, limits));
  // A verb that builds the whole plan (plan, validate, simulate --trace) is refused by it
  // before the tile search, where prepare_scenario alone would search first.
  Scenario limited = searched;
  limited.limits.max_memory_bytes =
      0.9 * estimate_plan(searched.attention, searched.schedule).memory_bytes;
  CHECK_THROWS_AS(check_whole_plan_first(limited), InputError);
}

TEST_CASE("a candidate in a job is guarded by the CP groups it simulates, as simulate guards it") {
  // Until 2026-12 tune and compare checked one group's plan: under --max-memory 300MB the
  // 16-GPU candidates of job-16k-ring (1024 groups) all ran, to 603 MB of RSS. Now a job is
  // guarded by the groups it simulates: every one with schedule.symmetry: off (or where no
  // shift by whole groups is a symmetry), else those of its quotient (job_symmetry.hpp).
  const std::string job = std::string(TILESIM_SOURCE_DIR) + "/scenarios/job-16k-ring.yaml";
  const Scenario loaded = load_scenario(job, {});
  REQUIRE(loaded.job.has_value());
  const auto job_bytes = [&](const ScheduleSpec& spec, double groups) {
    return kSimBaseBytes +
           (estimate_plan(loaded.attention, spec).memory_bytes - kSimBaseBytes) * groups +
           kJobBytesPerGpu * loaded.job->gpus;
  };
  const double groups = static_cast<double>(loaded.job->gpus / loaded.schedule.gpus);
  ScheduleSpec pass_q = loaded.schedule;
  pass_q.kind = "pass_q";
  const double ring_bytes = job_bytes(loaded.schedule, groups);
  const double pass_q_bytes = job_bytes(pass_q, groups);
  REQUIRE(pass_q_bytes > 1.2 * ring_bytes);
  // Between the two whole jobs, and above one group of either with the job's topology.
  ResourceLimits limits;
  limits.max_memory_bytes = std::sqrt(ring_bytes * pass_q_bytes);
  REQUIRE(job_bytes(pass_q, 1) < limits.max_memory_bytes);

  SECTION("every group simulated: the whole job's estimate") {
    const PreparedScenario p = prepare_scenario(job, {"schedule.symmetry=off"}, limits);
    REQUIRE(p.job_layout.has_value());
    const CandidateRun ring = decide_candidate_run(p, {"ring", p.scenario.schedule});
    CHECK(ring.refusal.empty());
    ScheduleSpec candidate = p.scenario.schedule;
    candidate.kind = "pass_q";
    const CandidateRun refused = decide_candidate_run(p, {"pass_q", candidate});
    CHECK(refused.refusal.key == "job.gpus");
    CHECK_THAT(refused.refusal.message,
               Catch::Matchers::StartsWith("a job that fits: its 1024 CP groups hold"));
    // simulate refuses it with the same message, at the same key.
    try {
      prepare_scenario(job, {"schedule.kind=pass_q", "schedule.symmetry=off"}, limits);
      FAIL("pass_q's job was not refused");
    } catch (const InputError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains(refused.refusal.message));
      CHECK_THAT(std::string(e.what()), Catch::Matchers::Contains("key 'job.gpus'"));
    }
  }
  SECTION("one group stands for all (tp-cp-dp on the H100 cluster): it fits and runs") {
    const PreparedScenario p = prepare_scenario(job, {}, limits);
    ScheduleSpec candidate = p.scenario.schedule;
    candidate.kind = "pass_q";
    CHECK(decide_candidate_run(p, {"pass_q", candidate}).refusal.empty());
    const CandidateResult r = evaluate_candidate(p, {"pass_q", candidate});
    CHECK_FALSE(r.over_limits);
    CHECK(r.ok);
  }
  SECTION("no shift by whole groups is a symmetry: every group, refused once that is known") {
    // 1536 GPUs are a pod and a half: tp-dp-cp groups reach across both halves and no shift by
    // whole groups maps the fabric onto itself, so all 384 groups would run; a limit above one
    // group's estimate passes the first check, and simulate_job's refusal answers.
    const std::vector<std::string> sets = {"job.gpus=1536", "schedule.gpus=4", "job.order=tp-dp-cp",
                                           "attention.seq_len=32K"};
    const Scenario s = load_scenario(job, sets);
    ResourceLimits small;
    const double one = kSimBaseBytes +
                       (estimate_plan(s.attention, s.schedule).memory_bytes - kSimBaseBytes) +
                       kJobBytesPerGpu * 1536;
    small.max_memory_bytes = one * 1.01;
    const PreparedScenario p = prepare_scenario(job, sets, small);
    const CandidateResult r = evaluate_candidate(p, {"ring", p.scenario.schedule});
    CHECK(r.over_limits);
    CHECK_THAT(r.reason, Catch::Matchers::StartsWith("job.gpus: a job that fits: its 384 CP "
                                                     "groups hold"));
  }
}

TEST_CASE("a candidate whose heads do not split is left out for its heads, not its plan's size") {
  // The reason `kind` on p is left out for, by tune's bound phase and by its simulation alike.
  const auto reasons = [](const PreparedScenario& p, const char* kind) {
    ScheduleSpec spec = p.scenario.schedule;
    spec.kind = kind;
    const ScheduleCandidate candidate{kind, spec};
    MakespanBound bound(p.topology, p.profile);
    std::vector<std::string> out;
    for (const CandidateResult& r :
         {bound_candidate(p, candidate, bound), evaluate_candidate(p, candidate)}) {
      CHECK_FALSE(r.ok);
      CHECK_FALSE(r.over_limits);
      out.push_back(r.reason);
    }
    return out;
  };
  // Ulysses over 1024 GPUs with 32 heads: tune listed it as over the memory limit (a plan of
  // 1.9e7 ops it could never build); simulate names the heads at load.
  const PreparedScenario p =
      prepare_scenario(kScenario, {"schedule.gpus=1024", "attention.seq_len=1M"});
  REQUIRE(p.scenario.attention.heads == 32);
  for (const std::string& reason : reasons(p, "ulysses")) {
    CHECK(reason ==
          "attention.heads: ulysses: heads 32 are not divisible by the Ulysses degree 1024 (the "
          "all-to-all gives each rank heads/1024 heads)");
  }
  // Pass-Q with a backward is left out for its pass, as `simulate` says at load (the guard
  // answered first at 4096 GPUs, over the memory limit).
  const PreparedScenario both = prepare_scenario(
      kScenario, {"schedule.gpus=4096", "attention.seq_len=1M", "attention.pass=both"});
  for (const std::string& reason : reasons(both, "pass_q")) {
    CHECK(reason.starts_with("attention.pass: schedule 'pass_q' builds the forward pass only"));
  }
  // USP with a degree that divides the heads is not refused for them.
  ScheduleSpec spec = p.scenario.schedule;
  spec.kind = "usp";
  spec.ulysses_degree = 8;
  CHECK(decide_candidate_run(p, {"usp:u8", spec}, /*search=*/false).refusal.empty());
}

TEST_CASE("simulate names a long run and its estimate before it starts") {
  // The notices prepare_scenario gives for `overrides`, and what it prepared.
  const auto prepare_noting = [](const std::vector<std::string>& overrides,
                                 std::vector<std::string>& notices) {
    return prepare_scenario(load_scenario(kScenario, overrides), {},
                            [&](const std::string& text) { notices.push_back(text); });
  };
  // Causal pass-Q has no shift symmetry (design notes, "Not pass-Q"): on 1024 GPUs every rank
  // runs, 13 P^2 - 12 P ops (resource_guard.hpp), 76 s at 5.6 us an op, over kLongSimulationS.
  std::vector<std::string> notices;
  const PreparedScenario every_rank =
      prepare_noting({"schedule.gpus=1024", "attention.seq_len=1M", "schedule.kind=pass_q",
                      "attention.causal=true"},
                     notices);
  CHECK_FALSE(every_rank.symmetry);
  const double ops = 13.0 * 1024 * 1024 - 12.0 * 1024;
  REQUIRE(notices.size() == 1);
  CHECK(notices[0] ==
        fmt::format("pass_q on 1024 GPUs runs with every rank: about {:.3g} ops, estimated at {} "
                    "of simulation on one core (sim/scenario/resource_guard.hpp, 5.6 us an op); "
                    "--max-ops refuses runs this large",
                    ops, format_time_s(ops * 5.6e-6)));
  // The ring on 4096 GPUs runs on auto's role quotient of one node (8 classes, 0.2 s): none.
  notices.clear();
  const PreparedScenario ring =
      prepare_noting({"schedule.gpus=4096", "attention.seq_len=1M"}, notices);
  REQUIRE(ring.symmetry);
  CHECK(ring.symmetry->classes == 8);
  CHECK(notices.empty());
  // Pass-Q on 16384 GPUs: the notice comes before the symmetry search (minutes there), from the
  // classes' lower bound (all_peers_classes_lower_bound: a pod, 1024 classes), K (13 P - 12) ops
  // on its quotient. The callback throws to stop the preparation there.
  std::string early;
  const auto stop = [&](const std::string& text) {
    early = text;
    throw std::runtime_error("stopped at the notice");
  };
  CHECK_THROWS_AS(
      prepare_scenario(load_scenario(kScenario, {"schedule.gpus=16384", "attention.seq_len=1M",
                                                 "schedule.kind=pass_q"}),
                       {}, stop),
      std::runtime_error);
  const double quotient_ops = 1024.0 * (13.0 * 16384 - 12.0);
  CHECK(early ==
        fmt::format("pass_q on 16384 GPUs runs on a quotient of at least 1024 rank classes (its "
                    "symmetry search, which routes every rank's peers, comes first): about {:.3g} "
                    "ops, estimated at {} of simulation on one core "
                    "(sim/scenario/resource_guard.hpp, 5.6 us an op); --max-ops refuses runs this "
                    "large",
                    quotient_ops, format_time_s(quotient_ops * 5.6e-6)));
  // The same pass-Q on 256 GPUs, 0.85M ops: none.
  notices.clear();
  prepare_noting({"schedule.gpus=256", "attention.seq_len=1M", "schedule.kind=pass_q",
                  "attention.causal=true"},
                 notices);
  CHECK(notices.empty());
}
