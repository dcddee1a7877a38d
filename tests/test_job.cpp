// Jobs of many CP groups (sim/job): placement closed forms, the composed plan, and the
// slowdown of groups that share nothing (exactly 1) or one bottleneck link (max-min 1/2).
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "sim/job/job_layout.hpp"
#include "sim/job/job_plan.hpp"
#include "sim/job/job_simulation.hpp"
#include "sim/model/simulator.hpp"
#include "sim/plan/validator.hpp"
#include "tests/schedule_fixtures.hpp"
#include "tests/sim_fixtures.hpp"

namespace tilesim {
namespace {

using testing::ideal_profile;
using testing::mha_shape;
using testing::plan_of;

// Two nodes of two GPUs; each GPU reaches its node's switch over a link of `gpu_link` bytes/s,
// the two switches are joined by one link of `uplink` bytes/s per direction; no latencies.
Topology two_nodes(double gpu_link, double uplink) {
  Topology t;
  t.name = "two-nodes";
  t.gpu_model = "test";
  t.gpus_per_node = 2;
  t.node_count = 2;
  std::vector<VertexId> gpus;
  for (int n = 0; n < 2; ++n) {
    for (int k = 0; k < 2; ++k) {
      gpus.push_back(t.add_device({fmt::format("n{}.gpu{}", n, k), DeviceKind::gpu, n, -1}));
    }
  }
  const VertexId sw0 = t.add_device({"sw0", DeviceKind::ib_switch, -1, -1});
  const VertexId sw1 = t.add_device({"sw1", DeviceKind::ib_switch, -1, -1});
  for (int g = 0; g < 4; ++g)
    t.connect(gpus[static_cast<std::size_t>(g)], g < 2 ? sw0 : sw1, gpu_link, 0, LinkClass::nvlink);
  t.connect(sw0, sw1, uplink, 0, LinkClass::ib);
  return t;
}

Picoseconds ceil_ps(double bytes, double bytes_per_s) {
  return static_cast<Picoseconds>(std::ceil(bytes * 1e12 / bytes_per_s));
}

TEST_CASE("job placement: TP fastest, then CP, then DP (Megatron order)", "[job]") {
  const JobLayout layout(16384, 8, 16, JobOrder::tp_cp_dp);
  CHECK(layout.dp() == 128);
  CHECK(layout.cp_groups() == 1024);
  // gpu = t + T (c + C d): dp 3, cp 5, tp 2 -> 2 + 8 (5 + 16 x 3) = 426, node 53 slot 2.
  CHECK(layout.gpu({3, 5, 2}) == 426);
  CHECK(layout.rank_of_gpu(426) == JobRank{3, 5, 2});
  // Group g = t + T d: group 26 is dp 3, tp 2; its CP rank c is on node 48 + c, slot 2.
  for (int c = 0; c < 16; ++c) CHECK(layout.gpu_of(26, c) == 8 * (48 + c) + 2);
  CHECK(layout.gpu_of(1023, 15) == 16383);
  CHECK(layout.group_ranks_per_node(8) == 1);
}

TEST_CASE("job placement: tp-dp-cp puts CP ranks D nodes apart", "[job]") {
  const JobLayout layout(16384, 8, 16, JobOrder::tp_dp_cp);
  // gpu = t + T (d + D c) = 2 + 8 (3 + 128 x 5) = 5146.
  CHECK(layout.gpu({3, 5, 2}) == 5146);
  CHECK(layout.rank_of_gpu(5146) == JobRank{3, 5, 2});
  CHECK(layout.gpu_of(26, 1) - layout.gpu_of(26, 0) == 8 * 128);
}

TEST_CASE("job placement is a bijection and counts the group's ranks per node", "[job]") {
  for (JobOrder order : {JobOrder::tp_cp_dp, JobOrder::tp_dp_cp}) {
    const JobLayout layout(32, 2, 4, order);  // D = 4, 8 groups
    std::set<int> seen;
    for (int g = 0; g < layout.cp_groups(); ++g) {
      for (int c = 0; c < 4; ++c) {
        const int gpu = layout.gpu_of(g, c);
        seen.insert(gpu);
        CHECK(layout.rank_of_gpu(gpu) == layout.group_rank(g, c));
      }
    }
    CHECK(seen.size() == 32);
    CHECK(*seen.rbegin() == 31);
  }
  // tp-cp-dp, T = 2: group 0 is GPUs 0, 2, 4, 6, all on node 0 of 8 GPUs; tp-dp-cp: 0, 8, 16, 24.
  CHECK(JobLayout(32, 2, 4, JobOrder::tp_cp_dp).group_ranks_per_node(8) == 4);
  CHECK(JobLayout(32, 2, 4, JobOrder::tp_dp_cp).group_ranks_per_node(8) == 1);
  CHECK_THROWS_AS(JobLayout(40, 8, 4, JobOrder::tp_cp_dp), std::invalid_argument);
}

TEST_CASE("a job plan is the group plan once per group, placed by the layout", "[job]") {
  const Plan group = plan_of("ring", mha_shape(4096, false), 4);
  const JobLayout layout(16, 2, 4, JobOrder::tp_cp_dp);  // 2 x 4 x 2: 4 groups
  const Plan job = compose_job_plan(group, layout);
  CHECK(job.ranks == 16);
  CHECK(job.op_count() == 4 * group.op_count());
  CHECK(job.objects.size() == 4 * group.objects.size());
  for (int g = 0; g < 4; ++g) {
    for (int r = 0; r < 4; ++r) {
      CHECK(job.placement[static_cast<std::size_t>(4 * g + r)] == layout.gpu_of(g, r));
    }
  }
  // Peers stay inside the group.
  for (int r = 0; r < job.ranks; ++r) {
    const RankProgram& p = job.programs[static_cast<std::size_t>(r)];
    for (int i = 0; i < static_cast<int>(p.size()); ++i) {
      if (p.op(i).peer >= 0) CHECK(p.op(i).peer / 4 == r / 4);
    }
  }
  // The validator checks one attention: it sees groups 1..3 recompute group 0's blocks, and
  // nothing else (matching, availability, outputs and deadlock freedom hold per copy).
  REQUIRE(validate_plan(group).ok());
  const PlanReport report = validate_plan(job);
  REQUIRE_FALSE(report.errors.empty());
  for (const std::string& e : report.errors) {
    INFO(e);
    CHECK(e.rfind("duplicated block", 0) == 0);
  }
}

TEST_CASE("groups that share no link run exactly as one group alone", "[job]") {
  const Topology topo = two_nodes(100e9, 10e9);
  const CalibrationProfile profile = ideal_profile(1e15);
  const Plan group = plan_of("ring", mha_shape(8192, false), 2);
  // tp-cp-dp, T = 1: group 0 on GPUs 0, 1 (node 0), group 1 on GPUs 2, 3 (node 1).
  const JobLayout layout(4, 1, 2, JobOrder::tp_cp_dp);
  const JobRun run = simulate_job(group, layout, topo, profile);
  CHECK(run.job.makespan_ps == run.group_alone_makespan_ps);
  CHECK(run.slowdown == 1.0);
  REQUIRE_FALSE(run.links.top.empty());
  for (const LinkLoad& l : run.links.top) CHECK(l.groups == 1);
  // Each group's two transfers cross gpu -> switch -> gpu: 4 links per group, none shared.
  CHECK(run.links.links_used == 8);
  CHECK(run.links.links_shared == 0);
  CHECK(run.links.max_groups == 1);
  // Each group's speedup is over its own 2 GPUs: the job's efficiency is the group's, equal to
  // that of the group alone (not its speedup over the job's 4 GPUs).
  const Figures job = summarize(run.job);
  SimulationOptions alone;
  alone.placement = {0, 1};
  const Figures group_alone = summarize(simulate(group, topo, profile, alone));
  CHECK(job.speedup == group_alone.speedup);
  CHECK(job.efficiency == job.speedup / 2.0);  // the same division: exact
  CHECK(job.efficiency == group_alone.efficiency);
}

TEST_CASE("two groups on one bottleneck link each get half of it (max-min)", "[job]") {
  const double uplink = 1e9;  // slow: the transfers, not the computes, set the makespan
  const Topology topo = two_nodes(100e9, uplink);
  const CalibrationProfile profile = ideal_profile(1e15);
  const Plan group = plan_of("ring", mha_shape(8192, false), 2);
  // tp-dp-cp, T = 1, D = 2: group 0 on GPUs 0, 2 and group 1 on GPUs 1, 3: both cross sw0-sw1.
  const JobLayout layout(4, 1, 2, JobOrder::tp_dp_cp);
  SimulationOptions alone_opts;
  alone_opts.record_transfers = true;  // the checks below read the transfer records
  alone_opts.placement = group_placement(group, layout, 0);
  alone_opts.record_transfers = true;  // per-transfer records are kept only when asked for
  const SimulationResult alone = simulate(group, topo, profile, alone_opts);
  // Every group simulated, so that every transfer is recorded; the quotient of one group (the
  // shift GPU k -> k + 1 maps group 0's route onto group 1's and the uplink onto itself) must
  // give the same figures, the uplink carrying its flow twice.
  JobOptions every_group;
  every_group.use_symmetry = false;
  const JobRun run = simulate_job(group, layout, topo, profile, every_group);
  REQUIRE(alone.makespan_ps == run.group_alone_makespan_ps);
  const JobRun quotient = simulate_job(group, layout, topo, profile);
  REQUIRE(quotient.symmetry.has_value());
  CHECK(quotient.symmetry->classes == 2);
  CHECK(quotient.job.transfers.size() == 2);
  CHECK(quotient.job.makespan_ps == run.job.makespan_ps);
  CHECK(quotient.slowdown == run.slowdown);
  CHECK(quotient.links.links_used == run.links.links_used);
  CHECK(quotient.links.links_shared == 2);
  CHECK(quotient.links.max_groups == 2);
  REQUIRE(quotient.links.top.size() == run.links.top.size());
  for (std::size_t i = 0; i < run.links.top.size(); ++i) {
    CHECK(quotient.links.top[i].name == run.links.top[i].name);
    CHECK(quotient.links.top[i].bytes == run.links.top[i].bytes);
    CHECK(quotient.links.top[i].groups == run.links.top[i].groups);
    CHECK(quotient.links.top[i].busy_s == run.links.top[i].busy_s);
  }

  // Alone: one flow per direction on the uplink, B / C. Together: two, B / (C / 2) each (the
  // GPU links at 100 GB/s carry one flow each and are not the bottleneck).
  REQUIRE(alone.transfers.size() == 2);
  for (const TransferRecord& t : alone.transfers) {
    CHECK(t.end_ps - t.posted_ps == ceil_ps(t.bytes, uplink));
  }
  REQUIRE(run.job.transfers.size() == 4);
  for (const TransferRecord& t : run.job.transfers) {
    CHECK(t.end_ps - t.posted_ps == ceil_ps(t.bytes, uplink / 2));
  }
  // Transfers sit on the critical path (a compute takes 0.28 ms, a transfer 67 ms): the job is
  // later by exactly the extra B / C, so slowdown = (alone + B / C) / alone.
  const double bytes = alone.transfers.front().bytes;
  const Picoseconds extra = ceil_ps(bytes, uplink / 2) - ceil_ps(bytes, uplink);
  CHECK(std::llabs(run.job.makespan_ps - alone.makespan_ps - extra) <= 1);
  // 1e-9 relative: the makespans agree to the 1 ps checked above, and 1 ps of a ~67 ms
  // makespan is ~1.5e-11 of the ratio; the rest is the division's double rounding.
  CHECK(run.slowdown == Approx(static_cast<double>(alone.makespan_ps + extra) /
                               static_cast<double>(alone.makespan_ps))
                            .epsilon(1e-9));
  CHECK(run.slowdown > 1.9);
  // The busiest links are the uplink's two directions: 2 groups, 2 B each.
  REQUIRE(run.links.top.size() >= 2);
  CHECK(run.links.links_shared == 2);
  CHECK(run.links.max_groups == 2);
  for (int i = 0; i < 2; ++i) {
    const LinkLoad& l = run.links.top[static_cast<std::size_t>(i)];
    CHECK(l.groups == 2);
    CHECK(l.bytes == 2 * bytes);
    CHECK(l.capacity_bytes_per_s == uplink);
    CHECK((l.name == "sw0 -> sw1" || l.name == "sw1 -> sw0"));
  }
}

TEST_CASE("a job simulation is deterministic", "[job]") {
  const Topology topo = two_nodes(100e9, 1e9);
  const CalibrationProfile profile = ideal_profile(1e15);
  const Plan group = plan_of("zigzag", mha_shape(8192, true), 2);
  const JobLayout layout(4, 1, 2, JobOrder::tp_dp_cp);
  const JobRun a = simulate_job(group, layout, topo, profile);
  const JobRun b = simulate_job(group, layout, topo, profile);
  CHECK(a.job.makespan_ps == b.job.makespan_ps);
  CHECK(a.group_alone_makespan_ps == b.group_alone_makespan_ps);
  REQUIRE(a.job.transfers.size() == b.job.transfers.size());
  for (std::size_t i = 0; i < a.job.transfers.size(); ++i) {
    CHECK(a.job.transfers[i].end_ps == b.job.transfers[i].end_ps);
  }
  REQUIRE(a.links.top.size() == b.links.top.size());
  for (std::size_t i = 0; i < a.links.top.size(); ++i) {
    CHECK(a.links.top[i].name == b.links.top[i].name);
    CHECK(a.links.top[i].busy_s == b.links.top[i].busy_s);
  }
}

}  // namespace
}  // namespace tilesim
