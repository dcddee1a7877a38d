// YAML loader: shipped files, nodes: auto sizing, fabric sizes, and every
// validation error with its file, line and key.
#include <algorithm>
#include <catch2/catch.hpp>

#include "sim/core/input_error.hpp"
#include "sim/topology/topology_loader.hpp"
#include "test_topology_helpers.hpp"

using namespace tilesim;
using tilesim::test::shipped;
using tilesim::test::write_temp_yaml;

namespace {

int count_prefix(const Topology& t, const std::string& prefix) {
  int n = 0;
  for (int v = 0; v < t.device_count(); ++v) {
    n += t.device(static_cast<VertexId>(v)).name.rfind(prefix, 0) == 0 ? 1 : 0;
  }
  return n;
}

struct Expected {
  int line;
  std::string key;
  std::string says;  // a fragment of the message
};

void check_error(const std::string& yaml, const Expected& e) {
  const std::string path = write_temp_yaml(yaml);
  try {
    load_topology(path, 16);
    FAIL("expected an InputError for key " << e.key);
  } catch (const InputError& err) {
    INFO(err.what());
    CHECK(err.file() == path);
    CHECK(err.line() == e.line);
    CHECK(err.key() == e.key);
    CHECK_THAT(err.expected(), Catch::Contains(e.says));
  }
}

const char* const kHeader =
    "name: t\n"         // 1
    "gpu: H100-SXM\n";  // 2

}  // namespace

TEST_CASE("topology: shipped single-node topologies load", "[topology][loader]") {
  struct Case {
    const char* file;
    const char* model;
    int devices;
  };
  for (const Case c : {Case{"dgx-h100.yaml", "H100-SXM", 17}, Case{"dgx-a100.yaml", "A100-SXM", 17},
                       Case{"hgx-h200.yaml", "H200-SXM", 17}, Case{"h800.yaml", "H800-SXM", 17},
                       Case{"pcie-8gpu.yaml", "A100-PCIe", 18}}) {
    INFO(c.file);
    const Topology t = load_topology(shipped(c.file), 8);
    CHECK(t.gpu_model == c.model);
    CHECK(t.gpu_count() == 8);
    CHECK(t.gpus_per_node == 8);
    CHECK(t.node_count == 1);
    CHECK(t.device_count() == c.devices);
    CHECK(t.device(t.gpu_vertex(5)).name == "n0.gpu5");
    CHECK(t.node_of_gpu(7) == 0);
  }
  const Topology h100 = load_topology(shipped("dgx-h100.yaml"), 64);  // fixed nodes: 1
  CHECK(h100.gpu_count() == 8);
  CHECK(h100.link(0).bandwidth_bytes_per_s == 450e9);
  CHECK(h100.link(0).latency_ps == 500'000);
}

TEST_CASE("topology: nodes: auto sizes the cluster to the GPUs wanted", "[topology][loader]") {
  const std::string h100 = shipped("h100-cluster.yaml");
  CHECK(load_topology(h100, 16).node_count == 2);
  CHECK(load_topology(h100, 17).node_count == 3);
  CHECK(load_topology(h100, 8).node_count == 1);
  CHECK(load_topology(h100, 0).node_count == 1);
  CHECK(load_topology(h100, -5).node_count == 1);

  const Topology two = load_topology(h100, 16);
  CHECK(two.gpu_count() == 16);
  CHECK(two.node_of_gpu(9) == 1);
  CHECK(two.device(two.gpu_vertex(9)).name == "n1.gpu1");
  CHECK(count_prefix(two, "leaf.") == 8);    // 1 leaf group x 8 rails
  CHECK(count_prefix(two, "spine.") == 32);  // 32 uplinks per leaf, non-blocking
  CHECK(two.device_count() == 2 * 17 + 8 + 32);

  const Topology big = load_topology(h100, 4096);  // 4 pods of 128 nodes
  CHECK(big.node_count == 512);
  CHECK(big.gpu_count() == 4096);
  CHECK(count_prefix(big, "leaf.") == 128);  // 16 groups of 32 nodes x 8 rails
  CHECK(count_prefix(big, "leaf.r7.") == 16);
  CHECK(count_prefix(big, "spine.p") == 4 * 32);
  CHECK(count_prefix(big, "core.") == 32 * 32);  // 32 planes x (32 leaves per pod) cores
  CHECK(big.device_count() == 512 * 17 + 128 + 4 * 32 + 32 * 32);
  // node links, nic-leaf, leaf-spine (32 leaves x 32 spines per pod), spine-core (each core
  // one per pod), two directed links per cable.
  CHECK(big.link_count() == 2 * (512 * 16 + 4096 + 4 * 32 * 32 + 32 * 32 * 4));
  CHECK(big.device(big.gpu_vertex(4095)).name == "n511.gpu7");

  const Topology a100 = load_topology(shipped("a100-cluster.yaml"), 4096);
  CHECK(a100.node_count == 512);
  CHECK(count_prefix(a100, "leaf.") == 26 * 8);     // ceil(512 / 20) groups x 8 rails
  CHECK(count_prefix(a100, "spine.p") == 13 * 20);  // ceil(512 / 40) pods x 20 spines
  CHECK(count_prefix(a100, "core.") == 20 * 16);    // 20 planes x 16 leaves per pod
  CHECK(a100.link(a100.link_count() - 1).bandwidth_bytes_per_s == 25e9);
}

// switch_ports: a core switch has one port per pod, so the shipped clusters join at most
// switch_ports pods: a100-cluster 40 pods of 40 nodes (12,800 GPUs), h100-cluster 64 pods of
// 128 nodes (65,536); one more node is refused, naming the topology file and `nodes`. A leaf
// needs nodes_per_leaf + spines ports, a spine its pod's leaves + its plane's cores.
TEST_CASE("topology: switch_ports bounds the fabric", "[topology][loader]") {
  CHECK(load_topology(shipped("a100-cluster.yaml"), 12800).node_count == 1600);
  CHECK(load_topology(shipped("h100-cluster.yaml"), 65536).node_count == 8192);
  try {
    load_topology(shipped("a100-cluster.yaml"), 12808);
    FAIL("expected an InputError for 1601 nodes");
  } catch (const InputError& err) {
    CHECK(err.key() == "nodes");
    CHECK_THAT(err.expected(),
               Catch::Contains("at most 1600 nodes (12800 GPUs) on this fabric of 40-port "
                               "switches (a core switch has one port per pod of 40 nodes), got "
                               "1601 nodes (12808 GPUs)"));
  }
  const std::string node_from = "node_from: " + shipped("dgx-h100.yaml") + "\n";
  // 32 nodes down and 32 spines up: 64 ports.
  check_error(std::string(kHeader) + "nodes: 4\n" + node_from +
                  "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 32, switch_latency: 500ns,\n"
                  "         switch_ports: 40}\n",
              {6, "fabric.switch_ports",
               "a leaf needs 64 ports (32 nodes down, 32 spines up), more than 40"});
  // 8 rails x 4 leaves per pod down, 32 cores up: 64 ports.
  check_error(std::string(kHeader) + "nodes: 4\n" + node_from +
                  "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 32, switch_latency: 500ns,\n"
                  "         pod_nodes: 128, spines: 8, switch_ports: 48}\n",
              {6, "fabric.switch_ports",
               "a spine needs 64 ports (32 leaves of its pod down, 32 cores of its plane up)"});
  // One pod, no core: a spine's 16 ports reach 2 leaves per rail of 4 nodes.
  const std::string one_pod =
      write_temp_yaml(std::string(kHeader) + "nodes: auto\n" + node_from +
                      "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 4, switch_latency: 500ns, "
                      "switch_ports: 16}\n");
  CHECK(load_topology(one_pod, 64).node_count == 8);
  CHECK_THROWS_AS(load_topology(one_pod, 72), InputError);
}

TEST_CASE("topology: fabric oversubscription and spine count", "[topology][loader]") {
  const std::string path = write_temp_yaml(std::string(kHeader) +
                                           "nodes: 4\n"
                                           "node_from: " +
                                           shipped("dgx-h100.yaml") +
                                           "\n"
                                           "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 2, "
                                           "oversubscription: 2, switch_latency: 500ns}\n");
  // node_from is relative to the file; an absolute path works too.
  const Topology t = load_topology(path, 0);
  CHECK(count_prefix(t, "leaf.") == 16);
  CHECK(count_prefix(t, "spine.") == 1);  // 2 nodes / 2 = 1 uplink
  const Link& up = t.link(t.link_count() - 1);
  CHECK(up.bandwidth_bytes_per_s == 50e9);  // 2 x 50 GB/s down / 2
  CHECK(up.latency_ps == 500'000);
  CHECK(t.link(t.link_count() - 1 - 2 * 16).latency_ps == 250'000);  // last nic-leaf link
}

TEST_CASE("topology: group link patterns", "[topology][loader]") {
  const std::string path = write_temp_yaml(
      std::string(kHeader) +
      "node:\n"
      "  devices:\n"
      "    - {name: g, kind: gpu, count: 4}\n"
      "    - {name: s, kind: pcie_switch, count: 2}\n"
      "  links:\n"
      "    - {between: [g, s], class: pcie, bandwidth: 1GB/s, latency: 1us}\n"
      "    - {between: [s, s], class: pcie, bandwidth: 2GB/s, latency: 1us, pattern: all}\n");
  const Topology t = load_topology(path, 0);
  REQUIRE(t.link_count() == 2 * (4 + 2));
  CHECK(t.device(t.link_target(0)).name == "n0.s0");  // g0 -> s0
  CHECK(t.device(t.link_target(2)).name == "n0.s0");  // g1 -> s0
  CHECK(t.device(t.link_target(4)).name == "n0.s1");  // g2 -> s1
  CHECK(t.device(t.link_target(6)).name == "n0.s1");  // g3 -> s1
}

TEST_CASE("topology: every bad input names file, line and key", "[topology][loader][errors]") {
  const std::string good_node =
      "node:\n"                                                                         // 3
      "  devices:\n"                                                                    // 4
      "    - {name: gpu, kind: gpu, count: 2}\n"                                        // 5
      "    - {name: sw, kind: nvswitch}\n"                                              // 6
      "  links:\n"                                                                      // 7
      "    - {between: [gpu, sw], class: nvlink, bandwidth: 450GB/s, latency: 1us}\n";  // 8
  const std::string h = kHeader;

  SECTION("unknown top-level key") {
    check_error(h + "colour: red\n" + good_node, {3, "colour", "unknown key"});
  }
  SECTION("unknown device key") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, speed: 1}\n",
                {5, "node.devices[0].speed", "unknown key"});
  }
  SECTION("bare number where a bandwidth is expected") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu, sw], class: nvlink, bandwidth: 450, latency: 1us}\n",
                {8, "node.links[0].bandwidth", "expected a bandwidth"});
  }
  SECTION("bad time unit") {
    check_error(
        h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
            "    - {name: sw, kind: nvswitch}\n  links:\n"
            "    - {between: [gpu, sw], class: nvlink, bandwidth: 1GB/s, latency: 2 weeks}\n",
        {8, "node.links[0].latency", "expected a time"});
  }
  SECTION("zero bandwidth") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu, sw], class: nvlink, bandwidth: 0GB/s, latency: 1us}\n",
                {8, "node.links[0].bandwidth", "positive bandwidth"});
  }
  SECTION("negative bandwidth") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu, sw], class: nvlink,\n"
                    "       bandwidth: -5GB/s, latency: 1us}\n",
                {9, "node.links[0].bandwidth", "expected a bandwidth"});
  }
  SECTION("unknown link class") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu, sw], class: warp, bandwidth: 1GB/s, latency: 1us}\n",
                {8, "node.links[0].class", "nvlink, pcie, upi, ib, ethernet"});
  }
  SECTION("unknown device kind") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: tpu}\n",
                {5, "node.devices[0].kind", "gpu, nvswitch"});
  }
  SECTION("link to an unknown device") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu, sw], class: nvlink, bandwidth: 1GB/s, latency: 1us}\n"
                    "    - {between: [gpu1, nvs], class: nvlink, bandwidth: 1GB/s, latency: 1us}\n",
                {9, "node.links[1].between", "unknown device 'nvs'"});
  }
  SECTION("duplicate device name") {
    check_error(
        h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
            "    - {name: gpu1, kind: nvswitch}\n",
        {6, "node.devices[1].name", "duplicate device name 'gpu1' (already defined at line 5)"});
  }
  SECTION("no GPUs") {
    check_error(
        h + "node:\n  devices:\n    - {name: sw, kind: nvswitch}\n"
            "  links:\n    - {between: [sw, sw], class: nvlink, bandwidth: 1GB/s, latency: 1us}\n",
        {5, "node.devices", "at least one device of kind gpu"});
  }
  SECTION("GPUs of one node not connected") {
    check_error(h + "node:\n  devices:\n    - {name: gpu, kind: gpu, count: 2}\n"
                    "    - {name: sw, kind: nvswitch}\n  links:\n"
                    "    - {between: [gpu0, sw], class: nvlink, bandwidth: 1GB/s, latency: 1us}\n",
                {8, "node.links", "GPU n0.gpu0 cannot reach GPU n0.gpu1"});
  }
  SECTION("several nodes without a fabric") {
    check_error(h + "nodes: 2\n" + good_node, {3, "nodes", "GPU n0.gpu0 cannot reach GPU n1.gpu0"});
  }
  SECTION("bad node count") {
    check_error(h + "nodes: 0\n" + good_node, {3, "nodes", "positive node count or auto"});
    check_error(h + "nodes: many\n" + good_node, {3, "nodes", "positive node count or auto"});
  }
  SECTION("fabric errors") {
    const std::string base = h + good_node;  // fabric starts at line 9
    check_error(
        base + "fabric: {port_bandwidth: 400Gb/s, nodes_per_leaf: 2, switch_latency: 1us}\n",
        {9, "fabric", "no device of kind nic"});
    const std::string with_nic =
        h +
        "node:\n  devices:\n    - {name: gpu, kind: gpu}\n    - {name: nic, kind: nic}\n"
        "  links:\n    - {between: [gpu, nic], class: pcie, bandwidth: 63GB/s, latency: 1us}\n"
        "fabric:\n";  // line 9
    check_error(with_nic + "  port_bandwidth: 400\n  nodes_per_leaf: 2\n  switch_latency: 1us\n",
                {10, "fabric.port_bandwidth", "expected a bandwidth"});
    check_error(with_nic +
                    "  port_bandwidth: 400Gb/s\n  nodes_per_leaf: 2\n  switch_latency: 1us\n"
                    "  radix: 64\n",
                {13, "fabric.radix", "unknown key"});
    check_error(with_nic +
                    "  port_bandwidth: 400Gb/s\n  nodes_per_leaf: 2\n  switch_latency: 1us\n"
                    "  oversubscription: 0.5\n",
                {13, "fabric.oversubscription", "ratio >= 1"});
    check_error(with_nic + "  port_bandwidth: 400Gb/s\n  nodes_per_leaf: 2\n",
                {10, "fabric.switch_latency", "missing required key"});
  }
  SECTION("node and node_from") {
    check_error(h + "node_from: does-not-exist.yaml\n", {3, "node_from", "not found"});
    check_error(h + good_node + "node_from: x.yaml\n", {9, "node_from", "exactly one of"});
  }
}
