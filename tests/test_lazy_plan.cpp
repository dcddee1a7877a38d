// Every rank's program generated as it runs (sim/scenario/lazy_plan.hpp: the ring family's,
// USP's and the double ring's, forward and backward, and pass-Q's) against the whole plan of
// make_plan, for the masks no shift symmetry covers and the full mask:
//   - the same ops: whole_plan_digest() equals plan_digest of the whole plan, and so do the op
//     and object counts, for every mask, correction form and schedule it generates;
//   - the same simulation: byte-identical result JSON (plan_digest included) of
//     simulate_windowed and simulate, on the H100 cluster at 8 to 256 GPUs;
//   - `simulate` takes the lazy path beyond kFullCheckMaxRanks only, with the result of the
//     whole plan (--full-check builds and validates it), and its guard sizes the window, not
//     the whole plan; so do `compare` and `tune` for such a candidate (evaluate_candidate).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "sim/core/input_error.hpp"
#include "sim/model/makespan_bound.hpp"
#include "sim/model/result_json.hpp"
#include "sim/model/simulator.hpp"
#include "sim/scenario/lazy_plan.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/resource_guard.hpp"
#include "sim/scenario/schedule_tuner.hpp"
#include "sim/scenario/shape_bound.hpp"
#include "sim/scenario/tune_search.hpp"
#include "sim/schedules/schedule.hpp"
#include "sim/verbs/compare_verb.hpp"
#include "sim/verbs/scenario_source.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/gpu_counts.hpp"
#include "tests/windowed_checks.hpp"

using namespace tilesim;

namespace {

const std::string kScenario = std::string(TILESIM_SOURCE_DIR) + "/scenarios/ring-256k.yaml";

struct Case {
  std::string kind;
  std::vector<std::string> mask;  // overrides
};

// Every mask a lazy source generates for the kind (zigzag's window and documents take its
// two-direction ring, which it does not; USP's route keys by their readers).
std::vector<Case> cases() {
  // ring-256k.yaml says causal: false; a mask that hides future keys needs causal: true.
  const std::vector<std::string> causal = {"attention.causal=true"};
  const std::vector<std::string> window = {"attention.causal=true", "attention.mask=sliding_window",
                                           "attention.window=4096"};
  const std::vector<std::string> documents = {
      "attention.causal=true", "attention.mask=documents",
      "attention.documents={distribution: document-lengths-pile.csv, seed: 1}"};
  const std::vector<std::string> full = {"attention.causal=false"};
  // USP: two Ulysses groups at 8 GPUs with u = 4; KV heads replicated (2 KV heads, u = 4).
  const auto usp = [](int u, std::vector<std::string> more) {
    more.push_back("schedule.ulysses=" + std::to_string(u));
    return Case{"usp", more};
  };
  std::vector<std::string> replicated = causal;
  replicated.push_back("attention.kv_heads=2");
  const auto pass = [](std::string kind, std::vector<std::string> mask, const char* p) {
    mask.push_back(std::string("attention.pass=") + p);
    return Case{std::move(kind), mask};
  };
  std::vector<Case> all = {{"ring", causal},       {"ring", window},    {"ring", documents},
                           {"ring", full},         {"zigzag", causal},  {"zigzag", full},
                           {"striped", causal},    {"striped", window}, {"striped", full},
                           {"striped", documents}, usp(4, causal),      usp(2, full),
                           usp(4, replicated)};
  // The ring family's backward and both passes under every mask it takes.
  const std::vector<Case> backward = {{"ring", causal},
                                      {"ring", window},
                                      {"ring", documents},
                                      {"zigzag", causal},
                                      {"striped", window}};
  const std::vector<Case> both = {{"ring", full},      {"ring", causal},   {"ring", window},
                                  {"ring", documents}, {"zigzag", causal}, {"zigzag", full},
                                  {"striped", causal}, {"striped", window}};
  for (const Case& c : backward) all.push_back(pass(c.kind, c.mask, "backward"));
  for (const Case& c : both) all.push_back(pass(c.kind, c.mask, "both"));
  // USP's backward and both passes (its backward opens with the all-to-all of dO).
  all.push_back(usp(4, {"attention.causal=true", "attention.pass=backward"}));
  all.push_back(usp(2, {"attention.causal=false", "attention.pass=both"}));
  all.push_back(usp(4, {"attention.causal=true", "attention.kv_heads=2", "attention.pass=both"}));
  // The double ring (inner rings of a node, 8 GPUs, or of 4 across 2 nodes at 8 GPUs) under
  // every mask, both passes under the full and causal masks, the backward alone under the
  // causal mask, a window and documents.
  const auto inner4 = [](std::vector<std::string> mask) {
    mask.push_back("schedule.inner=4");
    return mask;
  };
  for (const std::vector<std::string>& mask : {causal, window, documents, full}) {
    all.push_back({"double_ring", mask});
  }
  all.push_back({"double_ring", inner4(causal)});
  all.push_back(pass("double_ring", causal, "both"));
  all.push_back(pass("double_ring", full, "both"));
  all.push_back(pass("double_ring", causal, "backward"));
  all.push_back(pass("double_ring", inner4(window), "backward"));
  all.push_back(pass("double_ring", documents, "backward"));
  // Pass-Q (a forward only) under every mask: Q goes round, or under a window or documents as
  // far as its farthest reader.
  for (const std::vector<std::string>& mask : {causal, window, documents, full}) {
    all.push_back({"pass_q", mask});
  }
  return all;
}

std::vector<std::string> overrides(const Case& c, int gpus, const std::string& correction) {
  std::vector<std::string> o = {"schedule.gpus=" + std::to_string(gpus),
                                "attention.seq_len=" + std::to_string(1024 * gpus),
                                "schedule.kind=" + c.kind, "schedule.correction=" + correction};
  o.insert(o.end(), c.mask.begin(), c.mask.end());
  return o;
}

std::string mask_name(const Case& c) {
  std::string name;
  for (const std::string& o : c.mask) name += " " + o;
  return name;
}

}  // namespace

TEST_CASE("the lazy sources generate make_plan's plan for every mask they take") {
  for (const std::string correction : {"separate", "fused", "eager"}) {
    for (const Case& c : cases()) {
      INFO(c.kind << ", " << mask_name(c) << ", correction " << correction);
      const Scenario s = load_scenario(kScenario, overrides(c, 16, correction));
      REQUIRE(lazy_generates(s));
      const Plan whole = make_plan(s.attention, s.schedule);
      tilesim::test::require_same_ops_as_whole(*make_lazy_source(s), whole);
    }
  }
}

TEST_CASE("the lazy sources leave out what they do not generate") {
  const auto generates = [](const std::vector<std::string>& o) {
    return lazy_generates(load_scenario(kScenario, o));
  };
  CHECK_FALSE(generates({"schedule.kind=zigzag", "attention.causal=true",
                         "attention.mask=sliding_window", "attention.window=4096"}));
  CHECK_FALSE(generates({"schedule.kind=ring", "schedule.balance=work", "attention.causal=true"}));
  // Both passes under every mask the ring family takes (a member's backward waits for its
  // forward's last exchange, ring_passes.hpp), and the backward alone.
  CHECK(generates({"attention.pass=both"}));
  CHECK(generates({"attention.pass=both", "attention.causal=true"}));
  CHECK(generates({"attention.pass=backward", "attention.causal=true"}));
  CHECK(generates({"attention.pass=both", "attention.causal=true", "schedule.kind=striped",
                   "attention.mask=sliding_window", "attention.window=4096"}));
  CHECK_FALSE(generates({"attention.pass=both", "attention.causal=true", "schedule.kind=zigzag",
                         "attention.mask=sliding_window", "attention.window=4096"}));
  CHECK(generates({"schedule.kind=usp", "schedule.ulysses=4", "attention.pass=both"}));
  CHECK(generates({"schedule.kind=usp", "schedule.ulysses=4", "attention.pass=backward"}));
  CHECK(generates({"schedule.kind=double_ring", "attention.causal=true"}));
  CHECK(generates({"schedule.kind=double_ring", "attention.causal=true", "attention.pass=both"}));
  CHECK_FALSE(generates({"schedule.kind=double_ring", "schedule.inner=3"}));
  // Both passes under a window: a rank relays KV for many steps after its last forward call,
  // the only prerequisite of its backward's first, which the window would generate after it
  // finished (512 GPUs, inner rings of 64, a 256K window failed so): the whole plan runs.
  CHECK_FALSE(
      generates({"schedule.kind=double_ring", "attention.causal=true",
                 "attention.mask=sliding_window", "attention.window=4096", "attention.pass=both"}));
  CHECK(generates({"schedule.kind=double_ring", "attention.causal=true",
                   "attention.mask=sliding_window", "attention.window=4096",
                   "attention.pass=backward"}));
  CHECK_FALSE(generates({"schedule.kind=mesh"}));
  CHECK_FALSE(generates({"schedule.kind=usp", "schedule.ulysses=4", "attention.causal=true",
                         "attention.mask=sliding_window", "attention.window=4096"}));
  CHECK_FALSE(generates({"schedule.kind=ulysses", "attention.causal=true"}));
  CHECK_FALSE(generates({"schedule.kind=usp", "schedule.ulysses=8", "schedule.gpus=8"}));
  CHECK_THROWS_AS(make_lazy_source(load_scenario(kScenario, {"schedule.kind=mesh"})),
                  std::invalid_argument);
}

TEST_CASE("lazy simulation equals the whole plan's byte for byte") {
  for (int gpus : tilesim::test::gpu_counts({8, 64, 256})) {
    for (const Case& c : cases()) {
      // The other correction forms change the programs (checked above); each runs at 8 GPUs.
      const std::string correction =
          gpus == 8 ? (c.kind == "striped" ? "fused" : "eager") : std::string("separate");
      INFO(c.kind << ", " << mask_name(c) << " on " << gpus << " GPUs, correction " << correction);
      const PreparedScenario p = prepare_scenario(kScenario, overrides(c, gpus, correction));
      const Plan whole = make_plan(p.scenario.attention, p.scenario.schedule);
      const SimulationResult expected = simulate(whole, p.topology, p.profile);
      const auto source = make_lazy_source(p.scenario);
      const SimulationResult got = simulate_windowed(*source, p.topology, p.profile);
      CHECK(got.makespan_ps == expected.makespan_ps);
      CHECK(got.events == expected.events);
      ResultContext context{p.scenario.name, p.scenario.topology_path, p.scenario.calibration_path,
                            false};
      const std::string want = result_to_json(whole, expected, context).dump(2);
      context.plan_digest = source->whole_plan_digest();
      CHECK(result_to_json(source->plan(), got, context).dump(2) == want);
    }
  }
}

TEST_CASE("simulate runs lazily beyond the full check's ranks, with the same result") {
  // 512 GPUs: 1.57M ops each way for zigzag, 0.9M for USP (u = 8), seconds in Release; the
  // sanitizer suites keep 8 only.
  // Zigzag and the plain ring both: 3.1M ops, forward then backward; USP both: 2.6M; the
  // double ring (inner rings of 8) 1.6M.
  for (int gpus : tilesim::test::gpu_counts({8, 512}))
    for (const std::string kind :
         {"zigzag", "usp", "zigzag-both", "ring-both", "usp-both", "double_ring"}) {
      INFO(kind << " on " << gpus << " GPUs");
      ScenarioSource source;
      source.path = kScenario;
      source.overrides = {"schedule.gpus=" + std::to_string(gpus),
                          "attention.seq_len=" + std::to_string(256 * gpus),
                          "schedule.kind=" + kind.substr(0, kind.find('-')),
                          "attention.causal=true",
                          // every rank (auto takes causal zigzag's work-block quotient here)
                          "schedule.symmetry=exact"};
      if (kind.ends_with("-both")) source.overrides.push_back("attention.pass=both");
      if (kind.starts_with("usp"))
        source.overrides.push_back(gpus > 8 ? "schedule.ulysses=8" : "schedule.ulysses=4");
      const SimulationRun lazy = run_simulation(source);
      CHECK(lazy.lazy == (gpus > kFullCheckMaxRanks));
      if (lazy.lazy) CHECK_THROWS_AS(lazy.full_plan(), std::logic_error);
      SimulateRequest whole_request;
      whole_request.full_check = true;  // builds and validates the whole plan
      const SimulationRun whole = run_simulation(source, whole_request);
      CHECK_FALSE(whole.lazy);
      CHECK(simulation_document(lazy, false).dump(2) == simulation_document(whole, false).dump(2));
    }
}

TEST_CASE("the guard sizes a lazy run by its window, a whole plan by its ops") {
  // Zigzag, causal, on 16384 GPUs: the whole plan ~1.6e9 ops (~173 GiB); lazily the objects of
  // 16384 ranks and a window each.
  ResourceLimits limits;
  limits.max_memory_bytes = 4.0 * (1ULL << 30);
  const std::vector<std::string> big = {"schedule.gpus=16384", "attention.seq_len=16M",
                                        "schedule.kind=zigzag", "attention.causal=true"};
  Scenario s = load_scenario(kScenario, big);
  s.limits = limits;
  REQUIRE(lazy_runs(s));
  CHECK_NOTHROW(check_lazy_resources(s));
  CHECK_THROWS_AS(check_plan_resources(s), InputError);
  CHECK_NOTHROW(prepare_scenario(kScenario, big, limits));
  // Both passes run lazily too; blocks dealt by work (no lazy source) build the whole plan, and
  // its guard refuses it.
  std::vector<std::string> with_both = big;
  with_both.push_back("attention.pass=both");
  CHECK_NOTHROW(prepare_scenario(kScenario, with_both, limits));
  with_both.push_back("schedule.kind=ring");
  with_both.push_back("schedule.balance=work");
  CHECK_THROWS_AS(prepare_scenario(kScenario, with_both, limits), InputError);
  // The double ring's lazy run is sized by its window too (its whole plan, ~43 GiB here, was
  // what the guard sized before).
  std::vector<std::string> double_ring = big;
  double_ring.push_back("schedule.kind=double_ring");
  Scenario d = load_scenario(kScenario, double_ring);
  d.limits = limits;
  REQUIRE(lazy_runs(d));
  CHECK_NOTHROW(check_lazy_resources(d));
  CHECK_THROWS_AS(check_plan_resources(d), InputError);
  // --max-ops counts every op the lazy run simulates.
  limits.max_ops = 1e9;
  s.limits = limits;
  CHECK_THROWS_AS(check_lazy_resources(s), InputError);
}

TEST_CASE("compare and tune run a lazy candidate, with the whole plan's figures") {
  // Zigzag, causal, 512 GPUs: under a memory limit between the lazy and the whole plan's
  // estimates, the candidate still runs (it can only have run lazily) and its figures are those
  // of the whole plan simulated.
  for (int gpus : tilesim::test::gpu_counts({8, 512})) {
    INFO(gpus << " GPUs");
    PreparedScenario p =
        prepare_scenario(kScenario, {"schedule.gpus=" + std::to_string(gpus),
                                     "attention.seq_len=" + std::to_string(256 * gpus),
                                     "schedule.kind=zigzag", "attention.causal=true",
                                     // every rank: not auto's work-block quotient
                                     "schedule.symmetry=exact"});
    const double whole_bytes =
        estimate_plan(p.scenario.attention, p.scenario.schedule).memory_bytes;
    const double lazy_bytes = estimate_symmetric_plan(p.scenario.attention, p.scenario.schedule,
                                                      gpus, kWindowedOpsPerClass)
                                  .memory_bytes;
    const Plan whole = make_plan(p.scenario.attention, p.scenario.schedule);
    const Figures expected = summarize(simulate(whole, p.topology, p.profile));
    if (gpus > kFullCheckMaxRanks) {
      REQUIRE(whole_bytes > 2 * lazy_bytes);
      p.scenario.limits.max_memory_bytes = std::sqrt(whole_bytes * lazy_bytes);
    }
    const ScheduleCandidate candidate{"zigzag", p.scenario.schedule};
    MakespanBound bound(p.topology, p.profile);
    const CandidateResult bounded = bound_candidate(p, candidate, bound);  // tune's first pass
    REQUIRE(bounded.ok);
    CHECK(bounded.lower_bound_s > 0.0);
    CHECK(bounded.lower_bound_s <= expected.makespan_s);
    const CandidateResult r = evaluate_candidate(p, candidate);
    REQUIRE(r.ok);
    CHECK(r.figures.makespan_s == expected.makespan_s);
    CHECK(r.figures.peak_memory_bytes_max == expected.peak_memory_bytes_max);
    CHECK(r.figures.exposed_comm_s_max == expected.exposed_comm_s_max);
  }
  // Up to 256 GPUs the whole plan runs, so the same limit refuses it.
  PreparedScenario small =
      prepare_scenario(kScenario, {"schedule.gpus=64", "attention.seq_len=16384",
                                   "schedule.kind=zigzag", "attention.causal=true"});
  small.scenario.limits.max_memory_bytes =
      0.5 * estimate_plan(small.scenario.attention, small.scenario.schedule).memory_bytes;
  const CandidateResult refused = evaluate_candidate(small, {"zigzag", small.scenario.schedule});
  CHECK_FALSE(refused.ok);
  CHECK(refused.reason.rfind("schedule.gpus: ", 0) == 0);
}

TEST_CASE("compare's ring reference: rank 0's program where lazy, the guarded whole plan else") {
  // Up to 256 GPUs: rank 0's bytes (the lazy source) equal the whole ring plan's most bytes
  // received by any rank, for every mask it generates.
  const std::vector<std::vector<std::string>> masks = {
      {"attention.causal=true"},
      {"attention.causal=true", "attention.mask=sliding_window", "attention.window=4096"},
      {"attention.causal=true", "attention.mask=documents",
       "attention.documents={distribution: document-lengths-pile.csv, seed: 1}"},
      {"attention.causal=false"}};
  for (const std::vector<std::string>& mask : masks) {
    INFO(mask.back());
    ScenarioSource source;
    source.path = kScenario;
    source.overrides = {"schedule.gpus=64", "attention.seq_len=65536", "schedule.kind=zigzag"};
    source.overrides.insert(source.overrides.end(), mask.begin(), mask.end());
    const Scenario s = load_scenario(source);
    ScheduleSpec ring = s.schedule;
    ring.kind = "ring";
    const Plan whole = make_plan(s.attention, ring);
    double most = 0.0;
    for (const RankProgram& program : whole.programs) {
      double bytes = 0.0;
      for (int i = 0; i < static_cast<int>(program.size()); ++i) {
        if (program.op(i).kind == OpKind::recv) bytes += whole.object(program.writes(i)[0]).bytes;
      }
      most = std::max(most, bytes);
    }
    const nlohmann::ordered_json doc = compare_document(source, "ring", false);
    CHECK(doc["ring_bytes_per_rank"].get<double>() == most);
    CHECK(doc["schedules"][0]["comm_bytes_per_rank_max"].get<double>() == most);
  }
  // 512 GPUs, causal, under a memory limit only lazy runs fit: (P - 1) KV chunks of 256 tokens
  // x 32 KV heads x d128 x K and V x 2 bytes (bf16) = 511 x 4 MiB.
  ScenarioSource big;
  big.path = kScenario;
  big.overrides = {"schedule.gpus=512", "attention.seq_len=131072", "schedule.kind=zigzag",
                   "attention.causal=true"};
  const Scenario s = load_scenario(big);
  big.limits.max_memory_bytes = std::sqrt(
      estimate_plan(s.attention, s.schedule).memory_bytes *
      estimate_symmetric_plan(s.attention, s.schedule, 512, kWindowedOpsPerClass).memory_bytes);
  if (!tilesim::test::gpu_counts_capped()) {  // seconds in Release; too long for sanitizers
    const nlohmann::ordered_json doc = compare_document(big, "zigzag", false);
    CHECK(doc["ring_bytes_per_rank"].get<double>() == 511.0 * 4 * 1024 * 1024);
    CHECK(doc["schedules"][0]["comm_bytes_per_rank_max"].get<double>() == 511.0 * 4 * 1024 * 1024);
  }
  // A ring the lazy source does not generate (balance: work) is built whole, so the guard
  // refuses it under the same limit (before, compare built the reference with no guard).
  ScenarioSource work = big;
  work.overrides.push_back("schedule.kind=ring");
  work.overrides.push_back("schedule.balance=work");
  try {
    compare_document(work, "ring", false);
    FAIL("the whole ring reference was built past the guard");
  } catch (const InputError& e) {
    CHECK(e.key() == "schedule.gpus");  // the guard's key, not --schedules (all left out)
  }
}

TEST_CASE("tune bounds a lazy candidate without a closed form by its compute, not its plan") {
  // Ring under a sliding window on 512 GPUs, under a memory limit only the lazy run fits: the
  // bound is the compute term (positive, at most the simulated makespan) and the candidate runs;
  // the whole plan's guard would have refused it. Seconds in Release; not in the sanitizer
  // suites (TILESIM_TEST_MAX_GPUS).
  if (tilesim::test::gpu_counts_capped()) return;
  PreparedScenario p =
      prepare_scenario(kScenario, {"schedule.gpus=512", "attention.seq_len=131072",
                                   "schedule.kind=ring", "attention.causal=true",
                                   "attention.mask=sliding_window", "attention.window=8192"});
  const double whole_bytes = estimate_plan(p.scenario.attention, p.scenario.schedule).memory_bytes;
  const double lazy_bytes =
      estimate_symmetric_plan(p.scenario.attention, p.scenario.schedule, 512, kWindowedOpsPerClass)
          .memory_bytes;
  REQUIRE(whole_bytes > 2 * lazy_bytes);
  p.scenario.limits.max_memory_bytes = std::sqrt(whole_bytes * lazy_bytes);
  const ScheduleCandidate candidate{"ring", p.scenario.schedule};
  CHECK_FALSE(candidate_refusal(p, candidate).empty());  // the whole plan would be refused
  MakespanBound bound(p.topology, p.profile);
  const CandidateResult bounded = bound_candidate(p, candidate, bound);
  REQUIRE(bounded.ok);
  CHECK(bounded.lower_bound_s ==
        shape_compute_floor_s(p.scenario.attention, p.scenario.schedule, p.profile));
  CHECK(bounded.lower_bound_s > 0.0);
  const CandidateResult r = evaluate_candidate(p, candidate);
  REQUIRE(r.ok);
  CHECK(bounded.lower_bound_s <= r.figures.makespan_s);
}
