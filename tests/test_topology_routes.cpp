// Routes on the shipped topologies: exact paths, hop counts and latencies,
// the cross-rail rule, determinism, and the routing time at 4096 GPUs.
#include <catch2/catch.hpp>
#include <chrono>

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
  SECTION("same rail crosses the spine (spine.0 on ties), 6 links") {
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
  // spine detour (1.2 us).
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
        Names{"n0.gpu0", "n0.nic0", "leaf.r0.0", "spine.0", "leaf.r1.0", "n1.nic1", "n1.gpu1"});
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

TEST_CASE("topology: 4096-GPU cluster: ring neighbour routes are fast",
          "[topology][routes][perf]") {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 4096);
  const auto t1 = Clock::now();
  Router router(t);
  std::size_t hops = 0;
  for (int g = 0; g < 4096; ++g) hops += router.route(g, (g + 1) % 4096).links.size();
  const auto t2 = Clock::now();
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  const double route_s = std::chrono::duration<double>(t2 - t1).count();
  WARN("load 4096-GPU cluster: " << load_s << " s; route 4096 ring neighbours: " << route_s
                                 << " s");
  // 3584 intra-node pairs of 2 links; 512 node boundaries gpu7 -> next node's
  // gpu0: 496 in the same leaf group (NVLink first, 6 links) and 16 across groups
  // (spine, 6 links).
  CHECK(hops == 3584 * 2 + 512 * 6);
  CHECK(route_s < 0.5);
  CHECK(load_s < 2.0);
}
