// The tuner's branch and bound (sim/scenario/tune_search.hpp) against simulating every candidate
// with every rank (schedule.symmetry: off, tune_schedules): the same fastest candidates with the
// same figures, and every lower bound (sim/model/makespan_bound.hpp) at most the makespan the
// full simulation gives its candidate, pruned or not.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/model/makespan_bound.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/candidate_run.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/shape_bound.hpp"
#include "sim/scenario/tune_search.hpp"
#include "tests/gpu_counts.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

PreparedScenario prepared(int gpus, bool symmetry, bool causal = false) {
  return prepare_scenario(kScenario, {fmt::format("schedule.gpus={}", gpus),
                                      symmetry ? "schedule.symmetry=auto" : "schedule.symmetry=off",
                                      causal ? "attention.causal=true" : "attention.causal=false"});
}

std::map<std::string, CandidateResult> by_label(const std::vector<CandidateResult>& results) {
  std::map<std::string, CandidateResult> out;
  for (const CandidateResult& r : results) out[r.candidate.label] = r;
  return out;
}

void check_same_figures(const CandidateResult& x, const CandidateResult& y) {
  CHECK(x.figures.makespan_s == y.figures.makespan_s);
  CHECK(x.figures.exposed_comm_s_max == y.figures.exposed_comm_s_max);
  CHECK(x.figures.comm_bytes_per_rank_max == y.figures.comm_bytes_per_rank_max);
  CHECK(x.figures.peak_memory_bytes_max == y.figures.peak_memory_bytes_max);
  CHECK(x.figures.speedup == y.figures.speedup);
  CHECK(x.bound == y.bound);
}

// Each setup the backward bound tests take: backward and both, full and causal, 16 to 128 GPUs
// (causal to 64), every schedule.symmetry: auto.
template <typename Check>
void for_each_backward_setup(Check check) {
  for (const char* pass : {"backward", "both"}) {
    for (const bool causal : {false, true}) {
      for (const int gpus : tilesim::test::gpu_counts({16, 64, 128})) {
        if (causal && gpus > 64) continue;
        INFO(gpus << " GPUs, causal " << causal << ", pass " << pass);
        const PreparedScenario p = prepare_scenario(
            kScenario,
            {fmt::format("schedule.gpus={}", gpus), "schedule.symmetry=auto",
             fmt::format("attention.causal={}", causal), fmt::format("attention.pass={}", pass)});
        check(p, gpus, causal);
      }
    }
  }
}

}  // namespace

TEST_CASE("tune search: the pruned search keeps the exhaustive ranking's fastest candidates") {
  int cut_off = 0;  // over every size and keep
  for (const int gpus : {16, 32, 64}) {
    for (const int keep : {1, 3, 6}) {
      INFO(gpus << " GPUs, keep " << keep);
      // The reference: every candidate, every rank simulated.
      std::vector<CandidateResult> full = tune_schedules(prepared(gpus, false));
      const PreparedScenario p = prepared(gpus, true);
      const std::vector<ScheduleCandidate> candidates =
          tune_candidates(p.scenario.attention, p.scenario.schedule, false);
      std::vector<CandidateResult> searched = search_candidates(p, candidates, keep);
      REQUIRE(searched.size() == full.size());
      rank_candidates(searched);
      int pruned = 0;
      for (int i = 0; i < keep; ++i) {
        const CandidateResult& x = searched[static_cast<std::size_t>(i)];
        const CandidateResult& y = full[static_cast<std::size_t>(i)];
        REQUIRE(x.ok);
        CHECK(x.candidate.label == y.candidate.label);
        check_same_figures(x, y);
      }
      const std::map<std::string, CandidateResult> reference = by_label(full);
      const double kth_fastest_s = full[static_cast<std::size_t>(keep - 1)].figures.makespan_s;
      for (const CandidateResult& r : searched) {
        INFO(r.candidate.label);
        const CandidateResult& ref = reference.at(r.candidate.label);
        if (r.lower_bound_s >= 0 && ref.ok) CHECK(r.lower_bound_s <= ref.figures.makespan_s);
        if (r.pruned) {
          ++pruned;
          CHECK(r.lower_bound_s > kth_fastest_s);
          // Simulated here, as the search did not: the bound really is below its makespan.
          REQUIRE(ref.ok);
          CHECK(r.lower_bound_s <= ref.figures.makespan_s);
        } else if (r.ok) {
          check_same_figures(r, ref);
        } else if (r.cut_off) {
          // Stopped once it could not be among the keep fastest: at a time below its makespan
          // and above the keep-th fastest.
          ++cut_off;
          REQUIRE(ref.ok);
          CHECK(r.makespan_floor_s <= ref.figures.makespan_s);
          CHECK(r.makespan_floor_s > kth_fastest_s);
        } else {
          CHECK(!ref.ok);
          CHECK(r.reason == ref.reason);
        }
      }
      // The bound prunes something at these sizes (else this test would check nothing).
      CHECK(pruned > 0);
    }
  }
  // And some simulations are cut off (the stop-at-time path is exercised).
  CHECK(cut_off > 0);
}

TEST_CASE("tune search: a simulation stopped at a time has reached it, below its makespan") {
  const PreparedScenario p = prepared(16, false);
  const Plan plan = make_plan(p.scenario.attention, p.scenario.schedule);
  const SimulationResult whole = simulate(plan, p.topology, p.profile);
  REQUIRE(whole.stopped_at_ps == -1);
  REQUIRE(whole.makespan_ps > 2);
  SimulationOptions options;
  // Stopped at the makespan itself: nothing is left after it, the run is the whole one.
  options.stop_after_ps = whole.makespan_ps;
  const SimulationResult at_end = simulate(plan, p.topology, p.profile, options);
  CHECK(at_end.stopped_at_ps == -1);
  CHECK(at_end.makespan_ps == whole.makespan_ps);
  CHECK(at_end.events == whole.events);
  // One picosecond before: the last ops end at the makespan, the first event not handled.
  options.stop_after_ps = whole.makespan_ps - 1;
  CHECK(simulate(plan, p.topology, p.profile, options).stopped_at_ps == whole.makespan_ps);
  // Halfway: stopped at an event after the stop time, no later than the makespan.
  options.stop_after_ps = whole.makespan_ps / 2;
  const SimulationResult half = simulate(plan, p.topology, p.profile, options);
  CHECK(half.stopped_at_ps > whole.makespan_ps / 2);
  CHECK(half.stopped_at_ps <= whole.makespan_ps);
  CHECK(half.events < whole.events);
  // The symmetric path (one rank per class) stops the same way.
  const PreparedScenario q = prepared(16, true);
  const ScheduleCandidate ring{"ring", q.scenario.schedule};
  const CandidateResult stopped = evaluate_candidate(q, ring, whole.makespan_ps / 2);
  CHECK(stopped.cut_off);
  CHECK(!stopped.ok);
  CHECK(stopped.makespan_floor_s > ps_to_s(whole.makespan_ps / 2));
  CHECK(stopped.makespan_floor_s <= ps_to_s(whole.makespan_ps));
  const CandidateResult ran = evaluate_candidate(q, ring, whole.makespan_ps);
  REQUIRE(ran.ok);
  CHECK(!ran.cut_off);
  CHECK(ran.figures.makespan_s == ps_to_s(whole.makespan_ps));
}

TEST_CASE("tune search: a symmetric candidate has the figures and bound of the full one") {
  for (const int gpus : {8, 16, 64}) {
    INFO(gpus << " GPUs");
    const std::map<std::string, CandidateResult> full =
        by_label(tune_schedules(prepared(gpus, false)));
    const PreparedScenario p = prepared(gpus, true);
    for (const char* kind : {"ring", "zigzag", "striped"}) {
      INFO(kind);
      ScheduleSpec spec = p.scenario.schedule;
      spec.kind = kind;
      const ScheduleCandidate c{kind, spec};
      const std::optional<RingSymmetry> symmetry = decide_candidate_run(p, c).symmetry;
      REQUIRE(symmetry);
      CHECK(symmetry->exact());
      const CandidateResult r = evaluate_candidate(p, c);
      REQUIRE(r.ok);
      check_same_figures(r, full.at(kind));
      // The quotient's bound is the full plan's largest over the representatives: no larger.
      MakespanBound bound(p.topology, p.profile);
      const double quotient_s = plan_bound_candidate(p, c, bound).lower_bound_s;
      const double whole_s = bound.lower_bound_s(make_plan(p.scenario.attention, spec));
      CHECK(quotient_s <= whole_s);
      CHECK(quotient_s > 0);
      CHECK(quotient_s <= r.figures.makespan_s);
    }
  }
}

TEST_CASE("tune search: a quotient whose peers are not ring offsets is bounded by its compute") {
  // USP, the double ring and the mesh on their quotients (exact at 64 GPUs; the work block under
  // the causal mask at 512): the bound is the quotient's compute term, at most the whole plan's
  // compute (each representative runs a real rank's program) and at most the makespan reported.
  // Under the causal mask only past 256 GPUs: below, auto simulates every rank.
  for (const auto& [causal, gpus] : {std::pair{false, 64}, {false, 512}, {true, 512}}) {
    INFO(gpus << " GPUs, causal " << causal);
    const PreparedScenario p = prepare_scenario(
        kScenario, {fmt::format("schedule.gpus={}", gpus), "schedule.symmetry=auto",
                    fmt::format("attention.causal={}", causal), "attention.pass=both"});
    MakespanBound bound(p.topology, p.profile);
    std::vector<ScheduleCandidate> cases;
    for (const char* kind : {"usp", "double_ring", "mesh"}) {
      ScheduleSpec spec = p.scenario.schedule;
      spec.kind = kind;
      spec.ulysses_degree = std::string(kind) == "usp" ? 8 : 0;
      spec.inner_ring = std::string(kind) == "double_ring" ? 8 : 0;
      if (std::string(kind) == "mesh") {
        spec.tile_a = 8;
        spec.tile_b = gpus / 8;
        spec.tile_choice = MeshTileChoice::given;
      } else {
        spec.tile_a = spec.tile_b = 0;
      }
      cases.push_back({kind, spec});
    }
    for (const ScheduleCandidate& c : cases) {
      INFO(c.label);
      const CandidateRun run = decide_candidate_run(p, c);
      REQUIRE(run.symmetry);
      REQUIRE(run.symmetry->exact());
      CHECK(run.symmetry->work.has_value() == (causal && gpus == 512));
      const Plan quotient = build_symmetric_plan(run.scenario, *run.symmetry);
      const double bound_s = plan_bound_candidate(p, c, bound).lower_bound_s;
      CHECK(bound_s == bound.compute_lower_bound_s(quotient));
      CHECK(bound_s > 0);
      if (gpus == 64) {
        CHECK(bound_s <= bound.compute_lower_bound_s(make_plan(p.scenario.attention, c.spec)));
      }
      const CandidateResult r = evaluate_candidate(p, c, kNeverStop, &run);
      REQUIRE(r.ok);
      CHECK(bound_s <= r.figures.makespan_s);
    }
  }
}

TEST_CASE("tune search: the closed-form bounds are at most the plan-based ones, without plans") {
  // shape_bound.hpp sums, in closed form, terms the plan-based bound of makespan_bound.hpp also
  // counts (or smaller ones); the plan-based one reads the generated ops, an independent
  // derivation of the same groups. The plan-based bound is <= the makespan (the first test
  // simulates every candidate at 16-64 GPUs), so the closed form is too. The two differ by
  // float rounding where they sum the same terms (n x t against t added n times): 1e-12
  // relative, far inside the 2 ps each term is lowered by.
  for (const bool causal : {false, true}) {
    for (const int gpus : tilesim::test::gpu_counts({16, 32, 64, 128, 256})) {
      if (causal && gpus > 64) continue;
      INFO(gpus << " GPUs, causal " << causal);
      const PreparedScenario p = prepared(gpus, true, causal);
      MakespanBound bound(p.topology, p.profile);
      for (const ScheduleCandidate& c :
           tune_candidates(p.scenario.attention, p.scenario.schedule, false)) {
        INFO(c.label);
        const CandidateResult refusal = plan_bound_candidate(p, c, bound);
        const std::optional<double> closed_s =
            shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
        if (!refusal.ok) continue;  // refused: the search takes the plan path for the reason
        // The whole plan's bound, every term (plan_bound_candidate has only the compute term of
        // a quotient whose peers are not ring offsets).
        const double plan_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
        REQUIRE(closed_s);
        CHECK(*closed_s > 0);
        // USP's ring bundles also get the shared-route term the plan-based bound lacks
        // (MakespanBound::route_share_ps), so USP is checked against its simulation instead
        // (the first test at 16-64 GPUs, the next at 128 and 256).
        if (c.spec.kind != "usp") CHECK(*closed_s <= plan_s * (1 + 1e-12));
        // At 256 GPUs every candidate but the all-to-alls is bound by its communication (IB),
        // and both sum the same comm terms: they agree but for the 2 ps lowering, applied per
        // op there and per term here (1e-9 relative covers P ops). USP and Ulysses: the plan
        // bound has each call's correction merge too; the all-gather: the closed form routes
        // its peers, the plan bound does not (both valid).
        const bool all_to_all = c.spec.kind == "usp" || c.spec.kind == "ulysses";
        if (!causal && gpus == 256 && !all_to_all && c.spec.kind != "allgather_kv") {
          CHECK(*closed_s >= plan_s * (1 - 1e-9));
        }
        // Full mask, every kind but mesh: the closed form has the calls themselves (count x
        // time at their efficiency), the plan bound also the output-correction merge after
        // each (correction: separate), a few percent of a call.
        if (!causal && c.spec.kind != "mesh") CHECK(*closed_s >= 0.9 * plan_s);
      }
    }
  }
}

TEST_CASE("tune search: the mesh's closed-form backward bounds are at most the plan-based ones") {
  // The backward and both: the closed form sums the groups mesh_schedule.hpp's header lists and
  // the compute floor of each pass; the plan-based bound reads the generated ops. Every tile and
  // placement at 16 to 128 GPUs (causal to 64), and the simulated makespan at 64 GPUs.
  for_each_backward_setup([](const PreparedScenario& p, int gpus, bool) {
    MakespanBound bound(p.topology, p.profile);
    int checked = 0;
    for (const ScheduleCandidate& c :
         tune_candidates(p.scenario.attention, p.scenario.schedule, true)) {
      INFO(c.label);
      REQUIRE(plan_bound_candidate(p, c, bound).ok);
      const double plan_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
      const std::optional<double> closed_s =
          shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
      REQUIRE(closed_s);
      CHECK(*closed_s > 0);
      CHECK(*closed_s <= plan_s * (1 + 1e-12));
      if (gpus == 64) {
        const CandidateResult r = evaluate_candidate(p, c);
        REQUIRE(r.ok);
        CHECK(*closed_s <= r.figures.makespan_s);
      }
      ++checked;
    }
    CHECK(checked >= 8);
  });
}

TEST_CASE("tune search: the rings' closed-form backward bounds are at most the plan-based ones") {
  // Ring, zigzag, striped and every double-ring inner size, backward and both: the closed form
  // sums the groups ring_passes.hpp and double_ring_schedule.hpp list (KV as the forward's, dKV
  // one hop more) and the calls of each pass; the plan-based bound reads the generated ops. At
  // 128 GPUs, full mask, both are their IB ring steps and agree but for the 2 ps lowering; the
  // simulated makespan at 64 GPUs. USP and Ulysses (usp_schedule.hpp: the all-to-alls of dO and
  // of dQ and dKV around the backward ring) against their simulation at every size: their ring
  // bundles also get the shared-route term the plan-based bound lacks. The all-gather against
  // both at every size.
  for_each_backward_setup([](const PreparedScenario& p, int gpus, bool causal) {
    MakespanBound bound(p.topology, p.profile);
    int checked = 0, head_split = 0, gathers = 0;
    for (const ScheduleCandidate& c :
         tune_candidates(p.scenario.attention, p.scenario.schedule, false)) {
      const std::string& kind = c.spec.kind;
      INFO(c.label);
      if (kind == "usp" || kind == "ulysses") {
        const CandidateResult r = evaluate_candidate(p, c);
        if (!r.ok) continue;  // refused (Ulysses: 32 heads over 64 GPUs), for its reason
        const std::optional<double> closed_s =
            shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
        REQUIRE(closed_s);
        CHECK(*closed_s <= r.figures.makespan_s);
        // Not vacuous where the ring's IB steps decide (u = 2, 4 at 128 GPUs: 0.995 and 0.88
        // of the makespan when this was written; without the dKV steps u = 2 fell to 0.50):
        // the 0.75 is the 256-GPU forward test's, below, set after seeing runs.
        if (!causal && gpus == 128 && r.bound == "ib") {
          CHECK(*closed_s >= 0.75 * r.figures.makespan_s);
        }
        ++head_split;
        continue;
      }
      if (kind == "allgather_kv") {
        // NCCL's rings (allgather_kv_schedule.hpp: the all-gather again and the reduce-scatter
        // of the running dKV sums), each step split over a node's lanes: at most the plan-based
        // bound and the simulated makespan; no equality (the closed form routes its peers, the
        // plan-based bound does not).
        const std::optional<double> closed_s =
            shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
        REQUIRE(closed_s);
        const double plan_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
        CHECK(*closed_s <= plan_s * (1 + 1e-12));
        // Not vacuous: under the full mask within 0.85 of the plan-based bound, whose compute
        // term also has the reduce-scatter's P - 1 merges (the collective's reduction, costed
        // by its bytes), which the closed form leaves out. The 0.85 was set after seeing 0.898
        // at 128 GPUs, backward (the forward test's 0.9 failed there by that margin).
        if (!causal) CHECK(*closed_s >= 0.85 * plan_s);
        const CandidateResult r = evaluate_candidate(p, c);
        REQUIRE(r.ok);
        CHECK(*closed_s <= r.figures.makespan_s);
        ++gathers;
        continue;
      }
      if (kind != "ring" && kind != "zigzag" && kind != "striped" && kind != "double_ring") {
        continue;
      }
      const double plan_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
      const std::optional<double> closed_s =
          shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
      REQUIRE(closed_s);
      CHECK(*closed_s <= plan_s * (1 + 1e-12));
      if (!causal && gpus == 128) CHECK(*closed_s >= plan_s * (1 - 1e-9));
      if (gpus == 64) {
        const CandidateResult r = evaluate_candidate(p, c);
        REQUIRE(r.ok);
        CHECK(*closed_s <= r.figures.makespan_s);
      }
      ++checked;
    }
    // Ring, zigzag, striped and the inner sizes 2 .. gpus / 2.
    int inner_sizes = 0;
    for (int k = 2; k < gpus; ++k) inner_sizes += gpus % k == 0 ? 1 : 0;
    CHECK(checked == 3 + inner_sizes);
    // USP's degrees 2 .. 32 dividing the GPUs (heads and kv_heads 32), Ulysses up to 32.
    int degrees = 0;
    for (int u = 2; u <= std::min(32, gpus); ++u) degrees += gpus % u == 0 ? 1 : 0;
    CHECK(head_split >= degrees);
    CHECK(gathers == 1);
  });
}

TEST_CASE("tune search: the all-gather's closed-form backward carries its reduce-scatter") {
  // 16K tokens on 64 GPUs: chunks of 256 tokens, so the calls are short and NCCL's rings
  // decide. The closed form then equals the plan-based bound (the same ring steps; 1e-9 for the
  // 2 ps lowering), and the backward, the all-gather again and the reduce-scatter of fp32 dKV
  // sums (twice the KV's bytes), is more than twice the forward's all-gather alone.
  std::map<std::string, double> closed_by_pass;
  for (const char* pass : {"forward", "backward"}) {
    INFO(pass);
    const PreparedScenario p = prepare_scenario(
        kScenario, {"schedule.gpus=64", "attention.seq_len=16K", "schedule.kind=allgather_kv",
                    fmt::format("attention.pass={}", pass)});
    MakespanBound bound(p.topology, p.profile);
    const ScheduleCandidate c{"allgather_kv", p.scenario.schedule};
    const std::optional<double> closed_s =
        shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
    REQUIRE(closed_s);
    const double plan_s = bound.lower_bound_s(make_plan(p.scenario.attention, c.spec));
    CHECK(*closed_s <= plan_s * (1 + 1e-12));
    CHECK(*closed_s >= plan_s * (1 - 1e-9));
    const CandidateResult r = evaluate_candidate(p, c);
    REQUIRE(r.ok);
    CHECK(*closed_s <= r.figures.makespan_s);
    closed_by_pass[pass] = *closed_s;
  }
  CHECK(closed_by_pass["backward"] > 2 * closed_by_pass["forward"]);
}

TEST_CASE("tune search: closed-form bounds of mesh tiles and USP at 128 GPUs, simulated") {
  // Against the simulation itself (symmetric where exact, tests/test_symmetric_simulation.cpp).
  const PreparedScenario p = prepared(128, true);
  MakespanBound bound(p.topology, p.profile);
  int checked = 0;
  for (const ScheduleCandidate& c :
       tune_candidates(p.scenario.attention, p.scenario.schedule, false)) {
    if (c.spec.kind != "mesh" && c.spec.kind != "usp") continue;
    INFO(c.label);
    const std::optional<double> closed_s =
        shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
    REQUIRE(closed_s);
    const CandidateResult r = evaluate_candidate(p, c);
    REQUIRE(r.ok);
    CHECK(*closed_s <= r.figures.makespan_s);
    ++checked;
  }
  CHECK(checked >= 16);  // 8 tiles x 2 placements and USP
}

TEST_CASE("tune search: closed-form bounds of every USP degree at 256 GPUs, simulated") {
  const PreparedScenario p = prepared(256, true);
  MakespanBound bound(p.topology, p.profile);
  int checked = 0;
  for (const ScheduleCandidate& c :
       tune_candidates(p.scenario.attention, p.scenario.schedule, false)) {
    if (c.spec.kind != "usp") continue;
    INFO(c.label);
    const std::optional<double> closed_s =
        shape_lower_bound_s(p.scenario.attention, c.spec, p.profile, bound);
    REQUIRE(closed_s);
    const CandidateResult r = evaluate_candidate(p, c);
    REQUIRE(r.ok);
    CHECK(*closed_s <= r.figures.makespan_s);
    // The shared-route term is what decides the IB-bound degrees: within 25% of the makespan.
    // The 25% was set after seeing these runs: it checks that the bound is not vacuous (without
    // that term an IB-bound degree's bound is its transfers at the NVLink-class flow cap, far
    // below); the proven property is the <= above.
    if (r.bound == "ib") CHECK(*closed_s >= 0.75 * r.figures.makespan_s);
    ++checked;
  }
  CHECK(checked == 5);  // u = 2, 4, 8, 16, 32 (heads and kv_heads 32)
}

TEST_CASE("tune search: the all-gather's node cut floor is at most its simulated makespan") {
  for (const int gpus : {16, 32, 64, 128}) {
    for (const bool causal : {false, true}) {
      INFO(gpus << " GPUs, causal " << causal);
      const PreparedScenario p = prepared(gpus, true, causal);
      ScheduleSpec spec = p.scenario.schedule;
      spec.kind = "allgather_kv";
      MakespanBound bound(p.topology, p.profile);
      const std::optional<double> floor_s =
          shape_cut_floor_s(p.scenario.attention, spec, p.profile, bound);
      REQUIRE(floor_s);
      // By hand: NCCL's ring brings each of the P - 8 chunks of the other nodes (kv: c = S/P
      // tokens x 32 heads x 128 x K and V x 2 bytes) into a node once, over its 8 NDR NICs
      // (50 GB/s each at spec, less at the profile's efficiency).
      const double kv_bytes = 256.0 * 1024 / gpus * 32 * 128 * 2 * 2;
      CHECK(*floor_s > (gpus - 8) * kv_bytes / (8 * 50e9));
      CHECK(*floor_s < (gpus - 8) * kv_bytes / (8 * 40e9));
      const CandidateResult r = evaluate_candidate(p, {"allgather_kv", spec});
      REQUIRE(r.ok);
      CHECK(*floor_s <= r.figures.makespan_s);
      // The cut is no longer what the ring waits on (its steps move a whole chunk over NVLink
      // at every intra-node hop, and pay alpha each): only the bound is checked. Until the
      // all-gather ran as NCCL's ring (December 2026) the grouped send/recv sent each chunk
      // into a node once per GPU, 8 times this cut, and the floor was 0.75-0.96 of it.
    }
  }
  // No cut floor for another schedule.
  const PreparedScenario p = prepared(16, true);
  MakespanBound bound(p.topology, p.profile);
  CHECK(!shape_cut_floor_s(p.scenario.attention, p.scenario.schedule, p.profile, bound));
}
