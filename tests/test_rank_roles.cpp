// The role quotient (sim/model/rank_roles.hpp, schedule.symmetry: roles): one block of whole
// nodes stands for every block, the block chosen at the slowest transfer route.
//   - Where the shift by one node is exact (one leaf group), the role quotient is that shift's
//     quotient: the same result JSON, byte for byte.
//   - Beyond it (two leaf groups on the H100 cluster, where the exact shift is 256 ranks), the
//     block is the one before the spine crossing, the spread within a role is the spine hop's
//     extra latency read off the router, and the makespan lies within the drift bound
//     (P steps x that spread) of the exact run's.
//   - USP's blocks hold two nodes (its ring peer r + 8 would fold onto r in one), within the
//     same bound over its P / u ring steps.
//   - All-gather KV's NCCL rings: one node per block, the lanes' links inside the next node
//     folded onto the simulated node's, within the bound over its P - 1 steps.
//   - It refuses a ring whose transfers share a link across blocks, and one whose ranks do not
//     fill nodes; asked for where it cannot apply, the run is auto's with a warning.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/model/rank_roles.hpp"
#include "sim/model/ring_symmetry.hpp"
#include "sim/model/symmetric_simulation.hpp"
#include "sim/scenario/prepared_scenario.hpp"
#include "sim/scenario/symmetric_plan.hpp"
#include "sim/verbs/scenario_source.hpp"
#include "sim/verbs/simulate_verb.hpp"
#include "tests/symmetry_fixture.hpp"

using namespace tilesim;
using namespace tilesim::test;

namespace {

const std::string kScenario = shipped_scenario("ring-256k.yaml");

ScenarioSource ring_source(int gpus, const std::string& pass, const std::string& symmetry) {
  ScenarioSource source;
  source.path = kScenario;
  source.overrides = scale_overrides(gpus, pass, {"schedule.symmetry=" + symmetry});
  return source;
}

std::string without_symmetry(nlohmann::ordered_json j) {
  j.erase("symmetry");
  return j.dump(2);
}

}  // namespace

TEST_CASE("where one node's shift is exact, the role quotient gives the same result") {
  for (const std::string pass : {"forward", "both"}) {
    INFO("64 GPUs (one leaf group), pass " << pass);
    const SimulationRun exact = run_simulation(ring_source(64, pass, "auto"));
    REQUIRE(exact.symmetric());
    REQUIRE(exact.symmetry->classes == 8);
    const PreparedScenario p = prepare_scenario(kScenario, scale_overrides(64, pass, {}));
    std::string why_not;
    const AttentionShape& a = p.scenario.attention;
    const auto roles =
        find_rank_roles(p.topology, ring_shift_search(64), a.kv_bytes(a.seq_len / 64), why_not);
    REQUIRE(roles.has_value());
    CHECK(roles->classes == 8);
    REQUIRE(roles->roles.has_value());
    // Every node crossing of one leaf group takes the same route shape: no spread, and the
    // first block holds the slowest (tied) transfer.
    CHECK(roles->roles->role_spread_ps == 0);
    CHECK(roles->roles->first_rank == 0);
    // With roles requested, an exact shift of one node's ranks is taken as it is.
    const SimulationRun asked = run_simulation(ring_source(64, pass, "roles"));
    REQUIRE(asked.symmetric());
    CHECK_FALSE(asked.symmetry->roles.has_value());
    // The role quotient itself, run by the same verb path: byte-identical figures.
    SimulationRun by_roles = exact;
    by_roles.symmetry = roles;
    const Plan quotient = build_symmetric_plan(p.scenario, *roles);
    by_roles.result = simulate_classes(quotient, *roles, p.topology, p.profile);
    CHECK(by_roles.result.makespan_ps == exact.result.makespan_ps);
    CHECK(without_symmetry(simulation_document(by_roles, false)) ==
          without_symmetry(simulation_document(exact, false)));
  }
}

TEST_CASE("beyond a leaf group the role quotient stays within its drift bound of the exact run") {
  const int gpus = 512;  // two leaf groups of 32 nodes: ranks 255 -> 256 cross the spine
  for (const std::string pass : {"forward", "both"}) {
    INFO(gpus << " GPUs, pass " << pass);
    const SimulationRun exact = run_simulation(ring_source(gpus, pass, "auto"));
    REQUIRE(exact.symmetric());
    CHECK(exact.symmetry->classes == 256);
    const SimulationRun roles = run_simulation(ring_source(gpus, pass, "roles"));
    REQUIRE(roles.symmetric());
    REQUIRE(roles.symmetry->roles.has_value());
    CHECK(roles.symmetry->classes == 8);
    const RoleApproximation& approx = *roles.symmetry->roles;
    // Node 31 (ranks 248..255) is the last of leaf group 0; its GPU 7 sends over the spine.
    // The quotient's rank 0 runs on that block's first GPU (the rotated placement).
    CHECK(approx.first_rank == 248);
    CHECK(roles.symmetry->full_placement[0] == 248);
    CHECK(roles.symmetry->full_placement[gpus - 1] == 247);
    Router router(exact.prepared.topology);
    const Picoseconds spine_extra_ps =
        router.route(255, 256).latency_ps - router.route(7, 8).latency_ps;
    CHECK(spine_extra_ps > 0);
    CHECK(approx.role_spread_ps == spine_extra_ps);
    // A rank downstream of a faster crossing is costed at most the spread slower per crossing
    // transfer it waits for: P forward steps; the backward's P steps move KV and dKV, 2P more.
    const int rings = pass == "both" ? 3 : 1;
    const double bound_ps =
        static_cast<double>(rings * gpus) * static_cast<double>(approx.role_spread_ps);
    const double diff_ps =
        std::abs(static_cast<double>(roles.result.makespan_ps - exact.result.makespan_ps));
    INFO("makespan " << exact.result.makespan_ps << " ps exact, " << roles.result.makespan_ps
                     << " ps by roles");
    CHECK(diff_ps <= bound_ps);
    CHECK(simulation_document(roles, false)["symmetry"]["exact"] == false);
  }
}

TEST_CASE(
    "all-gather KV's NCCL rings run on one node's roles, its lanes into the next node folded") {
  const int gpus = 512;
  // exact: auto takes the roles here (more than kAutoExactCollectiveClasses exact classes).
  ScenarioSource source = ring_source(gpus, "forward", "exact");
  source.overrides.push_back("schedule.kind=allgather_kv");
  const SimulationRun exact = run_simulation(source);
  REQUIRE(exact.symmetric());
  CHECK(exact.symmetry->classes == 256);
  source.overrides.push_back("schedule.symmetry=roles");
  const SimulationRun roles = run_simulation(source);
  REQUIRE(roles.symmetric());
  REQUIRE(roles.symmetry->roles.has_value());
  const RankShiftSymmetry& sym = *roles.symmetry;
  CHECK(sym.classes == 8);
  CHECK(sym.peers_by_offset);
  CHECK(sym.roles->first_rank == 248);  // node 31, whose step to node 32 crosses the spine
  // Lane 1 of that step runs 255 -> 249 -> 257 -> 256: its last leg lies in node 32, whose own
  // ring step loads the same links, and stands for node 31's links at the same places.
  Router router(roles.prepared.topology);
  const Route next_node = router.route(257, 256);
  const Route simulated_node = router.route(249, 248);
  REQUIRE(next_node.links.size() == simulated_node.links.size());
  for (std::size_t i = 0; i < next_node.links.size(); ++i) {
    const int c = simulated_node.links[i];
    CHECK(sym.link_canonical[static_cast<std::size_t>(next_node.links[i])] == c);
    CHECK(sym.link_canonical[static_cast<std::size_t>(c)] == c);
    CHECK(sym.link_orbit_size[static_cast<std::size_t>(c)] == gpus / 8);
  }
  // P - 1 ring steps, each waiting for one transfer that crosses between blocks.
  const double bound_ps =
      static_cast<double>(gpus) * static_cast<double>(sym.roles->role_spread_ps);
  INFO("makespan " << exact.result.makespan_ps << " ps exact, " << roles.result.makespan_ps
                   << " ps by roles");
  CHECK(sym.roles->role_spread_ps > 0);
  CHECK(std::abs(static_cast<double>(roles.result.makespan_ps - exact.result.makespan_ps)) <=
        bound_ps);
  // The plan's compute is the exact run's: the quotient changes when KV arrives, not the call.
  // 1e-4, set after seeing the two differ by 7e-6 (54.322760 against 54.323151 ms): a call's
  // interference (comm_slowdown) depends on how transfers overlap it, which the roles shift; the
  // bound is ten times what was seen, far below a change in the call's cost.
  const double compute_s = simulation_document(exact, false)["compute_s_max"].get<double>();
  CHECK(simulation_document(roles, false)["compute_s_max"].get<double>() ==
        Approx(compute_s).epsilon(1e-4));
}

TEST_CASE("role blocks follow the placement: consecutive ranks spread over two nodes") {
  // 512 GPUs, rank 2t + u on GPU 256u + t (a mesh's kv-group-major placement with a = 2), each
  // rank sending to 2t + 2 + u (its KV ring). A node holds ranks of one parity, so no run of
  // consecutive ranks fills a node; 16 consecutive ranks (t in 8j..8j+7, both u) are nodes j
  // and 32 + j, and a shift by 16 maps them onto nodes j + 1 and 33 + j at the same GPU places.
  const PreparedScenario p = prepare_scenario(kScenario, scale_overrides(512, "forward", {}));
  ShiftSearch search;
  search.placement.resize(512);
  search.peers.resize(512);
  for (int r = 0; r < 512; ++r) {
    search.placement[static_cast<std::size_t>(r)] = 256 * (r % 2) + r / 2;
    search.peers[static_cast<std::size_t>(r)] = {(r + 2) % 512};
  }
  search.shift_allowed = [](int k) { return k % 2 == 0; };
  std::string why_not;
  const auto roles = find_rank_roles(p.topology, search, 1e6, why_not);
  INFO(why_not);
  REQUIRE(roles.has_value());
  CHECK(roles->classes == 16);
  REQUIRE(roles->roles.has_value());
  // Every node crossing (t = 8j + 7 -> 8j + 8) stays in its leaf group and takes as long: the
  // first block holding one, ranks 0..15, is simulated, 2t + u on GPU 256u + t.
  CHECK(roles->roles->first_rank == 0);
  CHECK(roles->roles->role_spread_ps == 0);
  CHECK(roles->full_placement[0] == 0);
  CHECK(roles->full_placement[1] == 256);
  CHECK(roles->full_placement[15] == 256 + 7);
}

TEST_CASE("USP's role blocks hold two nodes and stay within the drift bound") {
  const int gpus = 512, u = 8;
  ScenarioSource source = ring_source(gpus, "forward", "auto");
  source.overrides.push_back("schedule.kind=usp");
  source.overrides.push_back("schedule.ulysses=8");
  const SimulationRun exact = run_simulation(source);
  REQUIRE(exact.symmetric());
  CHECK_FALSE(exact.symmetry->roles.has_value());
  source.overrides.push_back("schedule.symmetry=roles");
  const SimulationRun roles = run_simulation(source);
  REQUIRE(roles.symmetric());
  REQUIRE(roles.symmetry->roles.has_value());
  // With one group per block the ring peer r + 8 would fold onto r: two nodes per block, the
  // pair whose second node is the last of leaf group 0 (its ring transfers cross the spine).
  CHECK(roles.symmetry->classes == 2 * u);
  CHECK(roles.symmetry->roles->first_rank == 240);
  // The ring's P / u steps each wait for one transfer across blocks; the all-to-alls stay in
  // a node, where every block's routes are alike.
  const double bound_ps =
      static_cast<double>(gpus / u) * static_cast<double>(roles.symmetry->roles->role_spread_ps);
  CHECK(std::abs(static_cast<double>(roles.result.makespan_ps - exact.result.makespan_ps)) <=
        bound_ps);
}

TEST_CASE("the role quotient refuses shared links and ranks that do not fill nodes") {
  // Four nodes of two GPUs; nodes 0 and 2 hang off switch A, nodes 1 and 3 off switch B, one
  // A-B link. The ring 0..7 crosses A -> B twice (1 -> 2 and 5 -> 6) on the same link, from
  // blocks 0..1 and 4..5.
  Topology t;
  t.name = "two-switches";
  t.gpu_model = "test";
  t.gpus_per_node = 2;
  t.node_count = 4;
  const VertexId a = t.add_device({"a", DeviceKind::ib_switch, -1, -1});
  const VertexId b = t.add_device({"b", DeviceKind::ib_switch, -1, -1});
  t.connect(a, b, 50e9, 600'000, LinkClass::ib);
  for (int g = 0; g < 8; ++g) {
    const int node = g / 2;
    const VertexId v = t.add_device({"gpu" + std::to_string(g), DeviceKind::gpu, node, -1});
    t.connect(v, node % 2 == 0 ? a : b, 50e9, 100'000, LinkClass::ib);
  }
  std::string why_not;
  CHECK_FALSE(find_rank_roles(t, ring_shift_search(8), 1e6, why_not).has_value());
  CHECK(why_not.find("carries transfers of ranks 0..1 and of ranks 4..5") != std::string::npos);
  // 12 GPUs on 8-GPU nodes: no block of whole nodes.
  const PreparedScenario twelve = prepare_scenario(kScenario, {"schedule.gpus=12"});
  CHECK_FALSE(find_rank_roles(twelve.topology, ring_shift_search(12), 1e6, why_not).has_value());
  CHECK(why_not.find("whole nodes") != std::string::npos);
  // As a scenario key where it cannot apply (a sliding window: the ranks' work differs, and no
  // block's stands for the others'): the run is auto's, with a warning.
  ScenarioSource windowed = ring_source(64, "forward", "roles");
  windowed.overrides.push_back("attention.causal=true");
  windowed.overrides.push_back("attention.mask=sliding_window");
  windowed.overrides.push_back("attention.window=4K");
  const SimulationRun run = run_simulation(windowed);
  CHECK_FALSE(run.symmetric());
  const std::vector<std::string>& warnings = run.result.warnings;
  CHECK(std::any_of(warnings.begin(), warnings.end(), [](const std::string& w) {
    return w.find("schedule.symmetry: roles not applied (roles needs the full mask") == 0;
  }));
}

// schedule.symmetry: auto takes the exact quotient while it has at most kAutoExactClasses (256)
// classes, the role quotient beyond, and says so in a warning; exact keeps the exact one. On
// the H100 cluster the ring's exact shift is one leaf group (256 ranks) up to one pod and the
// pod (1024 ranks) beyond it, so 1024 GPUs stay exact and 2048 take the roles.
TEST_CASE("auto takes the role quotient only where the exact one exceeds 256 classes") {
  const auto choose = [](int gpus, const std::string& mode) {
    const PreparedScenario p = prepare_scenario(
        kScenario, scale_overrides(gpus, "forward", {"schedule.symmetry=" + mode}));
    return choose_symmetry(p.scenario, p.topology, p.profile);
  };
  const SymmetryChoice pod = choose(1024, "auto");
  REQUIRE(pod.symmetry.has_value());
  CHECK(pod.symmetry->classes == 256);
  CHECK(pod.symmetry->exact());
  CHECK_FALSE(pod.symmetry->roles.has_value());
  CHECK(pod.warning.empty());

  const SymmetryChoice two_pods = choose(2048, "auto");
  REQUIRE(two_pods.symmetry.has_value());
  REQUIRE(two_pods.symmetry->roles.has_value());
  CHECK(two_pods.symmetry->classes == 8);
  CHECK(two_pods.symmetry->roles->first_rank == 1016);  // the node before the pod crossing
  CHECK(two_pods.warning.find("schedule.symmetry: auto simulated the approximate role quotient") ==
        0);

  const SymmetryChoice exact = choose(2048, "exact");
  REQUIRE(exact.symmetry.has_value());
  CHECK(exact.symmetry->classes == 1024);
  CHECK_FALSE(exact.symmetry->roles.has_value());
  CHECK(exact.warning.empty());

  // Where the roles cannot apply (a sliding window: no symmetry at all), auto runs as exact
  // would.
  const PreparedScenario windowed = prepare_scenario(
      kScenario, scale_overrides(2048, "forward",
                                 {"attention.causal=true", "attention.mask=sliding_window",
                                  "attention.window=4K"}));
  const SymmetryChoice none =
      choose_symmetry(windowed.scenario, windowed.topology, windowed.profile);
  CHECK_FALSE(none.symmetry.has_value());
  CHECK(none.warning.empty());
}
