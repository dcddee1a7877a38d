// Whole CP groups as symmetry classes of a job (sim/job/job_symmetry.hpp): the quotient of the
// representative groups, each flow with its copies' multiplicities, gives the full job's
// result to the picosecond. The reference is the job simulated with every group
// (schedule.symmetry: off), the path that composes and runs every group's plan and sums the
// link loads over every transfer; the two result JSONs must be byte-identical but for the
// "symmetry" key that only the quotient writes.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/job/job_layout.hpp"
#include "sim/job/job_simulation.hpp"
#include "sim/job/job_symmetry.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/schedule_fixtures.hpp"
#include "tests/sim_fixtures.hpp"
#include "tests/symmetry_fixture.hpp"
#include "tests/test_topology_helpers.hpp"

namespace tilesim {
namespace {

using test::shipped_scenario;

struct JobCase {
  std::string name;
  std::vector<std::string> overrides;
};

ScenarioSource job_source(const std::vector<std::string>& overrides) {
  ScenarioSource source;
  source.path = shipped_scenario("job-16k-ring.yaml");
  source.overrides = overrides;
  return source;
}

std::string topology_core4() {
  return "topology=" + std::string(TILESIM_SOURCE_DIR) + "/tests/data/job/h100-cluster-core4.yaml";
}

std::string calibration_h100() {
  return "calibration=" + std::string(TILESIM_SOURCE_DIR) + "/topologies/h100.calib.yaml";
}

// Every schedule kind in a job, both orders, a shared (oversubscribed) core; small enough that
// every group also runs in the reference.
std::vector<JobCase> job_cases() {
  return {
      {"ring, tp-cp-dp", {"job.gpus=1024", "schedule.gpus=8", "attention.seq_len=64K"}},
      {"zigzag causal both, tp-dp-cp across pods",
       {"job.gpus=2048", "schedule.gpus=4", "schedule.kind=zigzag", "attention.causal=true",
        "attention.pass=both", "job.order=tp-dp-cp", "attention.seq_len=32K"}},
      {"striped causal, tp 4",
       {"job.gpus=512", "job.tp=4", "schedule.gpus=8", "schedule.kind=striped",
        "attention.causal=true", "attention.seq_len=32K"}},
      {"usp u2, tp 4",
       {"job.gpus=512", "job.tp=4", "schedule.gpus=8", "schedule.kind=usp", "schedule.ulysses=2",
        "attention.seq_len=32K"}},
      {"mesh 2x4 causal",
       {"job.gpus=1024", "schedule.gpus=8", "schedule.kind=mesh", "schedule.tile=[2,4]",
        "attention.causal=true", "attention.seq_len=32K"}},
      {"allgather_kv causal both",
       {"job.gpus=1024", "schedule.gpus=8", "schedule.kind=allgather_kv", "attention.causal=true",
        "attention.pass=both", "attention.seq_len=32K"}},
      {"pass_q, tp-dp-cp",
       {"job.gpus=1024", "schedule.gpus=4", "schedule.kind=pass_q", "job.order=tp-dp-cp",
        "attention.seq_len=32K"}},
      {"ulysses, tp 2",
       {"job.gpus=512", "job.tp=2", "schedule.gpus=4", "schedule.kind=ulysses",
        "attention.seq_len=32K"}},
      {"double ring, tp 2",
       {"job.gpus=512", "job.tp=2", "schedule.gpus=16", "schedule.kind=double_ring",
        "attention.seq_len=32K"}},
      {"ring, tp-dp-cp on a 4:1 core (groups share links)",
       {"job.gpus=2048", "schedule.gpus=4", "job.order=tp-dp-cp", "attention.seq_len=64K",
        topology_core4(), calibration_h100()}},
  };
}

std::string without_symmetry_key(nlohmann::ordered_json j) {
  j.erase("symmetry");
  return j.dump(2);
}

TEST_CASE("a job's groups as classes give the full job's result JSON byte for byte",
          "[job][symmetry]") {
  for (const JobCase& c : job_cases()) {
    DYNAMIC_SECTION(c.name) {
      const SimulationRun quotient = run_simulation(job_source(c.overrides));
      std::vector<std::string> off = c.overrides;
      off.push_back("schedule.symmetry=off");
      const SimulationRun full = run_simulation(job_source(off));
      REQUIRE(quotient.job.has_value());
      REQUIRE(full.job.has_value());
      REQUIRE(quotient.job->symmetry.has_value());
      CHECK_FALSE(full.job->symmetry.has_value());
      const int group_ranks = quotient.prepared.scenario.schedule.gpus;
      const int groups = quotient.prepared.job_layout->cp_groups();
      const int simulated = quotient.job->symmetry->classes / group_ranks;
      CHECK(quotient.job->symmetry->classes % group_ranks == 0);
      CHECK(simulated < groups);
      CHECK(quotient.job->plan.ranks == quotient.job->symmetry->classes);
      CHECK(full.job->plan.ranks == groups * group_ranks);
      CHECK(quotient.job->job_ops == full.job->plan.op_count());
      CHECK(quotient.result.makespan_ps == full.result.makespan_ps);
      CHECK(quotient.result.events == full.result.events);
      const nlohmann::ordered_json q = simulation_document(quotient, false);
      const nlohmann::ordered_json f = simulation_document(full, false);
      CHECK(q["symmetry"]["groups_simulated"] == simulated);
      CHECK_FALSE(f.contains("symmetry"));
      CHECK(without_symmetry_key(q) == without_symmetry_key(f));
    }
  }
}

TEST_CASE("the shared-core job exercises links that several groups cross", "[job][symmetry]") {
  const JobCase c = job_cases().back();
  const SimulationRun run = run_simulation(job_source(c.overrides));
  REQUIRE(run.job.has_value());
  REQUIRE(run.job->symmetry.has_value());
  // Groups meet on the oversubscribed spine -> core links: that the equality above covers flows
  // of several groups on one link (multiplicities, and the groups counted from distinct
  // (group, link) pairs), not only groups that share nothing.
  CHECK(run.job->links.max_groups >= 2);
  CHECK(run.job->links.links_shared > 0);
  CHECK(run.job->slowdown > 1.0);
}

TEST_CASE("tp-cp-dp ring groups inside one leaf each: one group stands for all",
          "[job][symmetry]") {
  // C = 8 ranks on 8 consecutive nodes of one rail, 32 nodes per leaf: a group's hops never
  // leave its leaf, and moving every rank by one group (the next rail, or the next 8 nodes
  // after the last rail) maps each route onto a route of the same links' kinds. So the
  // smallest shift is one group: 1 of the 1024 groups (TP 8 x DP 128) runs.
  const SimulationRun run =
      run_simulation(job_source({"job.gpus=8192", "schedule.gpus=8", "attention.seq_len=64K"}));
  REQUIRE(run.job.has_value());
  REQUIRE(run.job->symmetry.has_value());
  CHECK(run.job->symmetry->classes == 8);
  CHECK(run.job->symmetry->copies() == 1024);
  CHECK(run.job->plan.ranks == 8);
}

TEST_CASE("schedule.symmetry: off, a trace and op records run every group", "[job][symmetry]") {
  const std::vector<std::string> small = {"job.gpus=256", "schedule.gpus=4",
                                          "attention.seq_len=32K"};
  CHECK(run_simulation(job_source(small)).job->symmetry.has_value());
  std::vector<std::string> off = small;
  off.push_back("schedule.symmetry=off");
  CHECK_FALSE(run_simulation(job_source(off)).job->symmetry.has_value());
  CHECK_FALSE(
      run_simulation(job_source(small), SimulateRequest{.trace = true}).job->symmetry.has_value());
  CHECK_FALSE(run_simulation(job_source(small), SimulateRequest{.records = true})
                  .job->symmetry.has_value());
  CHECK_FALSE(run_simulation(job_source(small), SimulateRequest{.no_symmetry = true})
                  .job->symmetry.has_value());
}

TEST_CASE("the symmetry search's routes are guarded before it runs", "[job][symmetry]") {
  // pass-Q on CP 4: every rank sends to its 3 peers, so the search routes 3 pairs a rank, 768
  // on 256 GPUs; the refusal is asked first with one group and those pairs, then with the
  // groups found.
  const Plan group = testing::plan_of("pass_q", testing::mha_shape(8192, false), 4);
  const JobLayout layout(256, 8, 4, JobOrder::tp_cp_dp);
  const Topology topology =
      prepare_scenario(shipped_scenario("job-16k-ring.yaml"), {"job.gpus=256", "schedule.gpus=4"})
          .topology;
  const CalibrationProfile profile = testing::ideal_profile(1e15);
  std::vector<std::pair<int, double>> asked;
  JobOptions options;
  options.refusal = [&asked](int groups, double pairs) {
    asked.emplace_back(groups, pairs);
    return std::string();
  };
  const JobRun run = simulate_job(group, layout, topology, profile, options);
  REQUIRE(run.symmetry.has_value());
  REQUIRE(asked.size() == 2);
  CHECK(asked[0] == std::pair<int, double>{1, 768.0});
  CHECK(asked[1] == std::pair<int, double>{run.symmetry->classes / 4, 768.0});
  options.refusal = [](int, double) { return std::string("too big"); };
  const JobRun refused = simulate_job(group, layout, topology, profile, options);
  CHECK(refused.refusal == "too big");
  CHECK_FALSE(refused.symmetry.has_value());  // refused before the search ran
  CHECK(refused.plan.ranks == 0);
}

TEST_CASE("groups whose ranks share a node's compute cores run together, byte for byte",
          "[job][symmetry]") {
  // h100.calib.yaml with `compute.cores: 4`: the 8 ranks on one node share 4 compute units, so
  // a node's computes slow each other. In tp-cp-dp a node holds rank c of the 8 groups t =
  // 0..7 of one d (g = t + 8 d), so no shift by fewer than 8 groups keeps every node's
  // computes inside the simulated ranks (find_rank_shift_symmetry's nodes-closed condition):
  // the quotient is those 8 groups, 8 x 8 = 64 ranks for the 16 groups of 128 GPUs, each
  // flow with 2 copies, and it must still give every group's result JSON.
  std::ifstream in(std::string(TILESIM_SOURCE_DIR) + "/topologies/h100.calib.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string calibration = text.str();
  const std::string compute = "\ncompute:\n";
  REQUIRE(calibration.find(compute) != std::string::npos);
  calibration.replace(calibration.find(compute), compute.size(), compute + "  cores: 4\n");
  const std::vector<std::string> shared = {"job.gpus=128", "schedule.gpus=8",
                                           "attention.seq_len=64K",
                                           "calibration=" + test::write_temp_yaml(calibration)};
  const SimulationRun quotient = run_simulation(job_source(shared));
  std::vector<std::string> off = shared;
  off.push_back("schedule.symmetry=off");
  const SimulationRun full = run_simulation(job_source(off));
  REQUIRE(quotient.prepared.profile.compute_cores == 4.0);
  REQUIRE(quotient.job->symmetry.has_value());
  CHECK(quotient.job->symmetry->classes == 64);
  CHECK(quotient.job->symmetry->copies() == 2);
  CHECK(quotient.result.makespan_ps == full.result.makespan_ps);
  CHECK(without_symmetry_key(simulation_document(quotient, false)) ==
        without_symmetry_key(simulation_document(full, false)));
  // The cores bind: the same job with one unit per rank runs faster.
  std::vector<std::string> own = shared;
  own.back() = calibration_h100();
  CHECK(run_simulation(job_source(own)).result.makespan_ps < quotient.result.makespan_ps);
}

}  // namespace
}  // namespace tilesim
