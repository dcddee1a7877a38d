// Routes on the shipped topologies: exact paths, hop counts and latencies,
// the cross-rail rule, spine spreading (d-mod-k), determinism, and the routes
// of the 1024-GPU pod and of the 65536-GPU three-tier cluster. Speed is measured in
// bench/bench_topology.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "sim/topology/topology_loader.hpp"
#include "test_topology_helpers.hpp"

using namespace tilesim;
using tilesim::test::route_names;
using tilesim::test::shipped;
using tilesim::test::write_temp_yaml;
using Names = std::vector<std::string>;

TEST_CASE("topology: same NVSwitch: gpu -> nvswitch -> gpu", "[topology][routes]") {
  for (const char* file : {"dgx-h100.yaml", "dgx-a100.yaml", "hgx-h200.yaml", "h800.yaml"}) {
    INFO(file);
    const Topology t = load_topology(shipped(file), 8);
    Router router(t);
    const Route& r = router.route(0, 5);
    CHECK(route_names(t, r) == Names{"n0.gpu0", "n0.nvswitch", "n0.gpu5"});
    CHECK(r.latency_ps == 1'000'000);  // 2 x 500 ns
    CHECK(t.link(r.links[0]).cls == LinkClass::nvlink);
  }
}

TEST_CASE("topology: pcie-8gpu: same switch, same socket, across sockets through UPI",
          "[topology][routes]") {
  const Topology t = load_topology(shipped("pcie-8gpu.yaml"), 8);
  Router router(t);
  CHECK(route_names(t, router.route(0, 1)) == Names{"n0.gpu0", "n0.psw0", "n0.gpu1"});
  CHECK(route_names(t, router.route(0, 2)) ==
        Names{"n0.gpu0", "n0.psw0", "n0.cpu0", "n0.psw1", "n0.gpu2"});
  const Route& cross = router.route(0, 4);
  CHECK(route_names(t, cross) ==
        Names{"n0.gpu0", "n0.psw0", "n0.cpu0", "n0.cpu1", "n0.psw2", "n0.gpu4"});
  CHECK(cross.links.size() == 5);
  CHECK(cross.latency_ps == 5'000'000);  // 5 links x 1 us
  CHECK(t.link(cross.links[2]).cls == LinkClass::upi);
  CHECK(router.route(7, 3).links.size() == 5);
}

TEST_CASE("topology: h100 cluster, same leaf group (2 nodes)", "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 16);
  Router router(t);
  SECTION("same rail: gpu -> nic -> leaf -> nic -> gpu, 4 links") {
    const Route& r = router.route(0, 8);
    CHECK(route_names(t, r) == Names{"n0.gpu0", "n0.nic0", "leaf.r0.0", "n1.nic0", "n1.gpu0"});
    CHECK(r.latency_ps == 2'600'000);  // PCIe 1 us x 2 + one switch 600 ns
  }
  SECTION("across rails: NVLink first (PXN-like), 6 links") {
    // NVLink detour 2 x 500 ns = 1.0 us beats the spine detour (two more
    // switches, 1.2 us). Moving to the rail at the destination instead costs the
    // same; the tie goes to the smaller vertex id at the first difference:
    // n0.nvswitch (id 8) before n0.nic0 (id 9).
    const Route& r = router.route(0, 9);
    CHECK(route_names(t, r) ==
          Names{"n0.gpu0", "n0.nvswitch", "n0.gpu1", "n0.nic1", "leaf.r1.0", "n1.nic1", "n1.gpu1"});
    CHECK(r.latency_ps == 3'600'000);
  }
  SECTION("within a node NVLink only") { CHECK(router.route(8, 15).links.size() == 2); }
}

TEST_CASE("topology: h100 cluster, different leaf groups (33 nodes)", "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 33 * 8);
  Router router(t);
  SECTION("same rail crosses the spine (node 32 mod 32 spines = spine.0), 6 links") {
    const Route& r = router.route(0, 256);
    CHECK(route_names(t, r) ==
          Names{"n0.gpu0", "n0.nic0", "leaf.r0.0", "spine.0", "leaf.r0.1", "n32.nic0", "n32.gpu0"});
    CHECK(r.latency_ps == 3'800'000);  // 2 us PCIe + 3 switches
  }
  SECTION("across rails: the spine changes rail, no NVLink hop, 6 links") {
    const Route& r = router.route(0, 257);
    CHECK(route_names(t, r) ==
          Names{"n0.gpu0", "n0.nic0", "leaf.r0.0", "spine.0", "leaf.r1.1", "n32.nic1", "n32.gpu1"});
    CHECK(r.latency_ps == 3'800'000);
  }
}

TEST_CASE("topology: slow NVLink makes cross-rail traffic take the spine", "[topology][routes]") {
  // Same layout with 1 us NVLink links: the NVLink detour (2 us) now loses to the
  // spine detour (1.2 us), through spine (destination node 1) mod 32 = spine.1.
  const std::string path = write_temp_yaml(
      "name: slow-nvlink\ngpu: H100-SXM\nnodes: 2\n"
      "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 8}\n"
      "    - {name: nvswitch, kind: nvswitch}\n    - {name: nic, kind: nic, count: 8}\n"
      "  links:\n"
      "    - {between: [gpu, nvswitch], class: nvlink, bandwidth: 450GB/s, latency: 1us}\n"
      "    - {between: [gpu, nic], class: pcie, bandwidth: 63GB/s, latency: 1us}\n"
      "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 32, switch_latency: 600ns}\n");
  const Topology t = load_topology(path, 0);
  Router router(t);
  const Route& r = router.route(0, 9);
  CHECK(route_names(t, r) ==
        Names{"n0.gpu0", "n0.nic0", "leaf.r0.0", "spine.1", "leaf.r1.0", "n1.nic1", "n1.gpu1"});
  CHECK(r.latency_ps == 3'800'000);
}

TEST_CASE("topology: routes are deterministic and independent of query order",
          "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 33 * 8);
  Router forward(t);
  Router backward(t);
  const int gpus = t.gpu_count();
  std::vector<std::vector<LinkId>> first;
  for (int s = 0; s < gpus; s += 7) first.push_back(forward.route(s, (s * 13 + 5) % gpus).links);
  std::vector<std::vector<LinkId>> second;
  for (int s = (gpus - 1) / 7 * 7; s >= 0; s -= 7) {
    second.insert(second.begin(), backward.route(s, (s * 13 + 5) % gpus).links);
  }
  CHECK(first == second);
  // A reused router gives the same answers as a fresh one.
  Router fan_in(t);
  for (int s = 0; s < gpus; s += 7) {
    CHECK(fan_in.route(s, 5).links == Router(t).route(s, 5).links);
  }
}

TEST_CASE("topology: routes made by destination equal the pairwise searches",
          "[topology][routes]") {
  // Two pods (a core tier), so that sources reach each destination inside its node, its leaf
  // group, across leaf groups and across pods, where the spines and cores tie (d-mod-k).
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 2048);
  const int gpus = t.gpu_count();
  std::vector<int> sources(static_cast<std::size_t>(gpus));
  for (int s = 0; s < gpus; ++s) sources[static_cast<std::size_t>(gpus - 1 - s)] = s;
  Router by_destination(t);
  Router pairwise(t);
  int compared = 0;
  for (int dst : {0, 7, 255, 256, 1023, 1024, 1531, 2047}) {
    const std::vector<Route> made = by_destination.routes_to(dst, sources);
    REQUIRE(made.size() == sources.size());
    for (std::size_t i = 0; i < made.size(); ++i) {
      const Route& searched = pairwise.route(sources[i], dst);
      CHECK(made[i].links == searched.links);
      CHECK(made[i].latency_ps == searched.latency_ps);
      compared += sources[i] != dst && made[i].links == searched.links ? 1 : 0;
    }
  }
  CHECK(compared == 8 * (gpus - 1));
  // Nothing kept: the symmetry search holds one destination's routes at a time.
  CHECK(by_destination.cached_routes() == 0);
  // Few sources go through route() (and its cache).
  CHECK(by_destination.routes_to(5, {1, 2}).at(1).links == pairwise.route(2, 5).links);
  CHECK(by_destination.cached_routes() == 2);
  CHECK_THROWS_AS(by_destination.routes_to(gpus, {0}), std::out_of_range);
  std::vector<int> outside = sources;
  outside.back() = -1;  // past kTreeAfterSearches: checked on the tree's path too
  CHECK_THROWS_AS(by_destination.routes_to(1, outside), std::out_of_range);
}

TEST_CASE("topology: routes walked from a destination's tree equal the pairwise searches",
          "[topology][routes]") {
  // An all-to-all asks one destination from every GPU: after kTreeAfterSearches searches the
  // router walks that destination's tree. Compared with a fresh router per pair, which
  // always runs the bidirectional search.
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 2048);
  const int gpus = t.gpu_count();
  Router fan_in(t);
  int compared = 0;
  for (int dst : {7, 1531}) {
    for (int src = 0; src < gpus; ++src) {
      const Route& walked = fan_in.route(src, dst);
      const bool same_node = src / 8 == dst / 8;  // walked too for dst 1531 (1528..1535)
      if (!same_node && src % 97 != 0 && src >= static_cast<int>(Router::kTreeAfterSearches) + 2) {
        continue;
      }
      const Route searched = Router(t).route(src, dst);
      CHECK(walked.links == searched.links);
      CHECK(walked.latency_ps == searched.latency_ps);
      ++compared;
    }
  }
  CHECK(fan_in.destination_trees() == 2);
  // Both sides of the switch to the tree: the searched sources and some walked ones.
  CHECK(compared > 2 * static_cast<int>(Router::kTreeAfterSearches + 2));
  // A destination asked fewer times keeps the searches.
  for (int src = 0; src < static_cast<int>(Router::kTreeAfterSearches) - 1; ++src) {
    CHECK(fan_in.route(src + 100, 2047).links == Router(t).route(src + 100, 2047).links);
  }
  CHECK(fan_in.destination_trees() == 2);
}

TEST_CASE("topology: one 1024-GPU pod loads and routes ring neighbours", "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 1024);
  // 128 nodes of 8 GPUs = one pod (pod_nodes 128): 8 rails x 4 leaf groups = 32 leaves,
  // 32 spines, no core tier.
  CHECK(t.gpu_count() == 1024);
  CHECK(t.node_count == 128);
  REQUIRE(t.spread_groups().size() == 1);
  CHECK(t.spread_groups()[0].members.size() == 32);
  CHECK(t.device_count() == 128 * 17 + 32 + 32);
  Router router(t);
  std::size_t hops = 0;
  for (int g = 0; g < 1024; ++g) hops += router.route(g, (g + 1) % 1024).links.size();
  // 896 intra-node pairs of 2 links; 128 node boundaries gpu7 -> next node's gpu0: 124 in
  // the same leaf group (NVLink first, 6 links) and 4 across groups (spine, 6 links).
  CHECK(hops == 896 * 2 + 128 * 6);
  CHECK(router.cached_routes() == 1024);
}

TEST_CASE("topology: 65536 GPUs are 64 pods joined by a core tier", "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 65536);
  // 8192 nodes; per pod 128 nodes = 8 rails x 4 leaves = 32 leaves and 32 spines; 32 core
  // planes of 32 cores (one uplink port per core), each core one link per pod: every switch
  // has 64 ports (32 down, 32 up at the leaves and spines; 64 pods at a core).
  CHECK(t.node_count == 8192);
  CHECK(t.device_count() == 8192 * 17 + 64 * 32 + 64 * 32 + 32 * 32);
  CHECK(t.spread_groups().size() == 64 + 32);
  for (std::size_t g = 0; g < 64; ++g) CHECK(t.spread_groups()[g].node_stride == 1);
  CHECK(t.spread_groups()[64].node_stride == 32);
  const VertexId core = *t.find_device("core.5.7");
  CHECK(boost::out_degree(core, t.graph()) == 64);
  const VertexId spine = *t.find_device("spine.p3.5");
  CHECK(boost::out_degree(spine, t.graph()) == 32 + 32);
  // Spine-core links: the spine's 32 x 50 GB/s downlinks spread over 32 cores.
  const auto [first, last] = boost::out_edges(core, t.graph());
  CHECK(t.graph()[*first].bandwidth_bytes_per_s == Approx(50e9));
  Router router(t);
  // Node 0 rail 0 to node 128 * 5 + 37 (pod 5) rail 0: leaf, spine (n mod 32 = 5... ),
  // core ((n / 32) 8 + rail) mod 32 = (21 x 8) mod 32 = 8, spine of pod 5, leaf: 8 links,
  // 5 switches = 3.0 us of switches + 2 x 1 us PCIe.
  const int node = 128 * 5 + 37;
  const Route& r = router.route(0, node * 8);
  const Names names = route_names(t, r);
  REQUIRE(names.size() == 9);
  CHECK(names[2] == "leaf.r0.0");
  CHECK(names[3] == fmt::format("spine.p0.{}", node % 32));
  CHECK(names[4] == fmt::format("core.{}.{}", node % 32, 8));
  CHECK(names[5] == fmt::format("spine.p5.{}", node % 32));
  CHECK(names[6] == fmt::format("leaf.r0.{}", node / 32));
  CHECK(r.latency_ps == 2'000'000 + 5 * 600'000);
}

TEST_CASE("topology: traffic from one pod to another spreads over every core",
          "[topology][routes]") {
  // Two pods of 1024 GPUs. Behind spine s of pod 1 are its 4 nodes n = s mod 32 on 8 rails:
  // 32 destination GPUs, which the core rotation ((n / 32) 8 + rail) mod 32 sends through the
  // 32 cores of plane s, one each. So from any set of sources in pod 0, each of the 32 x 32
  // core -> pod-1-spine links carries the routes to exactly one destination GPU. Without the
  // rail, (n / 32) mod 32 took 4 values (n / 32 = 4..7 in pod 1): 4 links of 32 per spine,
  // an eighth of the core tier, carried all of it.
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 2048);
  Router router(t);
  std::map<std::string, int> routes_into_pod1;  // core -> spine.p1.* link: routes over it
  const int sources = 128;                      // GPU 0 of each node of pod 0
  for (int node = 0; node < 128; ++node) {
    for (int dst = 1024; dst < 2048; ++dst) {
      const Names names = route_names(t, router.route(node * 8, dst));
      for (std::size_t i = 0; i + 1 < names.size(); ++i) {
        if (names[i].rfind("core.", 0) == 0 && names[i + 1].rfind("spine.p1.", 0) == 0) {
          ++routes_into_pod1[names[i] + ">" + names[i + 1]];
        }
      }
    }
  }
  CHECK(routes_into_pod1.size() == 32 * 32);
  for (const auto& [link, routes] : routes_into_pod1) {
    INFO(link);
    CHECK(routes == sources);
  }
}

TEST_CASE("topology: a pod size that is not whole leaf groups is an input error",
          "[topology][loader]") {
  const std::string path = write_temp_yaml(R"(name: pods
gpu: H100-SXM
nodes: 4
node_from: )" + shipped("dgx-h100.yaml") + R"(
fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 2, switch_latency: 600ns, pod_nodes: 3}
)");
  CHECK_THROWS_WITH(load_topology(path, 32),
                    Catch::Contains("pod_nodes") && Catch::Contains("multiple of nodes_per_leaf"));
}

namespace {
// Index s of the one spine ("spine.<s>") a route crosses, or -1 if none / several.
int spine_of(const Topology& t, const Route& r) {
  int spine = -1;
  for (const std::string& name : route_names(t, r)) {
    if (name.rfind("spine.", 0) != 0) continue;
    if (spine >= 0) return -1;
    spine = std::stoi(name.substr(6));
  }
  return spine;
}
}  // namespace

TEST_CASE("topology: routes across the spine spread by destination node (d-mod-k)",
          "[topology][routes]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 1024);
  const int spines = static_cast<int>(t.spread_groups()[0].members.size());
  REQUIRE(spines == 32);
  Router router(t);
  SECTION("one source, destinations on 2 x spines nodes of other leaf groups: every spine") {
    std::map<int, int> uses;  // spine -> routes through it
    for (int node = 32; node < 32 + 2 * spines; ++node) {
      const int dst = node * 8 + node % 8;  // vary the rail as well
      INFO("node " << node);
      const int spine = spine_of(t, router.route(0, dst));
      CHECK(spine == node % spines);
      ++uses[spine];
    }
    CHECK(uses.size() == static_cast<std::size_t>(spines));
    for (const auto& [spine, count] : uses) CHECK(count == 2);
  }
  SECTION("rail 0 of leaf group 0 to rail 0 of leaf group 1: no hot link") {
    // 32 x 32 routes; d-mod-k puts 32 on every leaf-spine uplink and
    // spine-leaf downlink (the old smallest-id rule put all 1024 on spine.0).
    std::map<LinkId, int> load;
    for (int src_node = 0; src_node < 32; ++src_node) {
      for (int dst_node = 32; dst_node < 64; ++dst_node) {
        for (LinkId l : router.route(src_node * 8, dst_node * 8).links) ++load[l];
      }
    }
    std::set<int> spine_loads;
    int spine_links = 0;
    for (const auto& [link, count] : load) {
      const auto& spine_ids = t.spread_groups()[0].members;
      const bool up =
          spine_ids.end() != std::find(spine_ids.begin(), spine_ids.end(), t.link_target(link));
      const bool down =
          spine_ids.end() != std::find(spine_ids.begin(), spine_ids.end(), t.link_source(link));
      if (!up && !down) continue;
      ++spine_links;
      spine_loads.insert(count);
    }
    CHECK(spine_links == 2 * spines);
    CHECK(spine_loads == std::set<int>{32});
  }
  SECTION("the same (src, dst) always gives the same route") {
    Router fresh(t);
    for (int dst = 1023; dst >= 256; dst -= 97) {
      INFO("dst " << dst);
      const std::vector<LinkId> first = router.route(3, dst).links;
      CHECK(fresh.route(3, dst).links == first);
      CHECK(Router(t).route(3, dst).links == first);
      CHECK(router.route(3, dst).links == first);
    }
  }
  SECTION("inside a leaf group nothing changes: NVLink first, no spine") {
    CHECK(route_names(t, router.route(0, 9)) ==
          Names{"n0.gpu0", "n0.nvswitch", "n0.gpu1", "n0.nic1", "leaf.r1.0", "n1.nic1", "n1.gpu1"});
    CHECK(spine_of(t, router.route(0, 31 * 8 + 5)) == -1);
  }
}
