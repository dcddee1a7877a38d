// Summaries: link counts, injection bandwidths, hand-computed bisections, dot.
#include <catch2/catch.hpp>

#include "sim/topology/bisection.hpp"
#include "sim/topology/topology_loader.hpp"
#include "sim/topology/topology_summary.hpp"
#include "test_topology_helpers.hpp"

using namespace tilesim;
using tilesim::test::shipped;

TEST_CASE("topology: bisection of a hand-built graph", "[topology][summary]") {
  // g0, g1 -- s1 ==5== s2 -- g2, g3 (10 GB/s each), plus g1 -- g2 at 3 GB/s.
  // Cut {g0, g1} | {g2, g3}: s1-s2 (5) + g1-g2 (3) = 8 GB/s.
  Topology t;
  std::vector<VertexId> g;
  for (int i = 0; i < 4; ++i) {
    g.push_back(t.add_device({"g" + std::to_string(i), DeviceKind::gpu, 0, -1}));
  }
  const VertexId s1 = t.add_device({"s1", DeviceKind::pcie_switch, 0, -1});
  const VertexId s2 = t.add_device({"s2", DeviceKind::pcie_switch, 0, -1});
  t.connect(g[0], s1, 10e9, 0, LinkClass::pcie);
  t.connect(g[1], s1, 10e9, 0, LinkClass::pcie);
  t.connect(s1, s2, 5e9, 0, LinkClass::upi);
  t.connect(s2, g[2], 10e9, 0, LinkClass::pcie);
  t.connect(s2, g[3], 10e9, 0, LinkClass::pcie);
  t.connect(g[1], g[2], 3e9, 0, LinkClass::nvlink);
  CHECK(bisection_bytes_per_s(t) == 8e9);
  CHECK(max_flow_bytes_per_s(t, {0}, {3}) == 8e9);  // g0->s1: 5 direct + 3 via g1-g2
  CHECK(max_flow_bytes_per_s(t, {2}, {3}) == 10e9);
  CHECK_THROWS_AS(max_flow_bytes_per_s(t, {0, 1}, {1}), std::invalid_argument);
}

TEST_CASE("topology: summaries of shipped topologies", "[topology][summary]") {
  SECTION("dgx-h100") {
    const TopologySummary s = summarize(load_topology(shipped("dgx-h100.yaml"), 8));
    CHECK(s.name == "dgx-h100");
    CHECK(s.gpu_model == "H100-SXM");
    CHECK(s.gpus == 8);
    CHECK(s.nodes == 1);
    CHECK(s.devices == 17);
    CHECK(s.cables == 16);
    CHECK(s.links_per_class == std::map<std::string, int>{{"nvlink", 8}, {"pcie", 8}});
    CHECK(s.devices_per_kind.at("nic") == 8);
    CHECK(s.intra_node_injection_bytes_per_s_per_gpu == 450e9);
    CHECK(s.network_injection_bytes_per_s_per_gpu == 0.0);
    CHECK(s.bisection_bytes_per_s == 4 * 450e9);  // 4 GPUs' NVLink into the NVSwitch
    const std::string text = format_summary(s);
    CHECK_THAT(text, Catch::Contains("dgx-h100") && Catch::Contains("H100-SXM") &&
                         Catch::Contains("1.80 TB/s"));
  }
  SECTION("pcie-8gpu: bisection is the UPI link") {
    const TopologySummary s = summarize(load_topology(shipped("pcie-8gpu.yaml"), 8));
    CHECK(s.bisection_bytes_per_s == 22e9);
    CHECK(s.links_per_class.at("upi") == 1);
    CHECK(s.intra_node_injection_bytes_per_s_per_gpu == 31.5e9);
  }
  SECTION("2-node h100 cluster: bisection = 8 NDR ports of node 0") {
    const TopologySummary s = summarize(load_topology(shipped("h100-cluster.yaml"), 16));
    CHECK(s.nodes == 2);
    CHECK(s.bisection_bytes_per_s == 8 * 50e9);
    CHECK(s.network_injection_bytes_per_s_per_gpu == 50e9);
    CHECK(s.links_per_class.at("ib") == 16 + 8 * 32);  // nic-leaf + leaf-spine cables
  }
}

TEST_CASE("topology: 4096-GPU cluster bisection", "[topology][summary]") {
  // Speed is measured in bench/bench_topology.cpp (BM_Summarize4096).
  const TopologySummary s = summarize(load_topology(shipped("h100-cluster.yaml"), 4096));
  CHECK(s.gpus == 4096);
  CHECK(s.nodes == 512);
  CHECK(s.devices_per_kind.at("ib_switch") == 128 + 4 * 32 + 32 * 32);  // leaves, spines, cores
  // Non-blocking: half of the nodes (256) x 8 NICs x 50 GB/s.
  CHECK(s.bisection_bytes_per_s == 256 * 8 * 50e9);
}

TEST_CASE("topology: dot output names every GPU and cable", "[topology][summary]") {
  const Topology t = load_topology(shipped("h100-cluster.yaml"), 16);
  const std::string dot = to_dot(t);
  CHECK(dot.rfind("graph \"h100-cluster\" {", 0) == 0);
  for (int gpu = 0; gpu < t.gpu_count(); ++gpu) {
    CHECK_THAT(dot, Catch::Contains("\"" + t.device(t.gpu_vertex(gpu)).name + "\" [shape=box]"));
  }
  std::size_t edges = 0;
  for (std::size_t at = dot.find(" -- "); at != std::string::npos; at = dot.find(" -- ", at + 1)) {
    ++edges;
  }
  CHECK(edges == static_cast<std::size_t>(t.link_count() / 2));
  CHECK_THAT(dot, Catch::Contains("\"n0.gpu0\" -- \"n0.nvswitch\" [label=\"nvlink 450.0 GB/s\"]"));
}
