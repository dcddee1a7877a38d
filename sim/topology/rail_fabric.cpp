// Rail-optimised fat tree generation (see rail_fabric.hpp for the model).
#include "sim/topology/rail_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/topology/node_template.hpp"

namespace tilesim {

int RailFabricSpec::spine_count() const {
  if (spines > 0) return spines;
  return std::max(1, static_cast<int>(std::ceil(nodes_per_leaf / oversubscription - 1e-9)));
}

double RailFabricSpec::leaf_spine_bandwidth_bytes_per_s() const {
  return nodes_per_leaf * port_bandwidth_bytes_per_s / oversubscription / spine_count();
}

RailFabricSpec parse_rail_fabric(const YamlMap& fabric) {
  fabric.allow_only({"port_bandwidth", "nodes_per_leaf", "switch_latency", "oversubscription",
                     "spines", "class"});
  RailFabricSpec spec;
  spec.port_bandwidth_bytes_per_s = fabric.bandwidth_bytes_per_s("port_bandwidth");
  if (!(spec.port_bandwidth_bytes_per_s > 0.0)) {
    fabric.fail("port_bandwidth", "expected a positive bandwidth such as 400Gb/s");
  }
  const std::int64_t per_leaf = fabric.integer("nodes_per_leaf");
  if (per_leaf < 1 || per_leaf > 100000) {
    fabric.fail("nodes_per_leaf", "expected a positive integer");
  }
  spec.nodes_per_leaf = static_cast<int>(per_leaf);
  const double switch_latency_s = fabric.time_s("switch_latency");
  if (switch_latency_s > kMaxLinkLatencyS) {
    fabric.fail("switch_latency", "at most 1s (switches take ns to us)");
  }
  spec.switch_latency_ps = s_to_ps(switch_latency_s);
  if (fabric.has("oversubscription")) {
    spec.oversubscription = fabric.number("oversubscription");
    if (!(spec.oversubscription >= 1.0) || !std::isfinite(spec.oversubscription)) {
      fabric.fail("oversubscription", "expected a ratio >= 1 (1 = non-blocking)");
    }
  }
  if (fabric.has("spines")) {
    const std::int64_t spines = fabric.integer("spines");
    if (spines < 1 || spines > 100000) fabric.fail("spines", "expected a positive integer");
    spec.spines = static_cast<int>(spines);
  }
  if (fabric.has("class")) {
    spec.cls = parse_link_class(fabric, "class");
    if (spec.cls != LinkClass::ib && spec.cls != LinkClass::ethernet) {
      fabric.fail("class", "expected ib or ethernet");
    }
  }
  return spec;
}

void add_rail_fabric(Topology& topology, const RailFabricSpec& spec,
                     const std::vector<std::vector<VertexId>>& nics_per_node) {
  if (nics_per_node.empty() || nics_per_node.front().empty()) {
    throw std::invalid_argument("add_rail_fabric: no NICs");
  }
  const std::size_t rails = nics_per_node.front().size();
  for (const auto& nics : nics_per_node) {
    if (nics.size() != rails) {
      throw std::invalid_argument("add_rail_fabric: nodes differ in NIC count");
    }
  }
  const std::size_t nodes = nics_per_node.size();
  const auto per_leaf = static_cast<std::size_t>(spec.nodes_per_leaf);
  const std::size_t groups = (nodes + per_leaf - 1) / per_leaf;
  const Picoseconds half_switch_ps = spec.switch_latency_ps / 2;

  std::vector<VertexId> leaves;  // rail-major: leaves[r * groups + g]
  for (std::size_t r = 0; r < rails; ++r) {
    for (std::size_t g = 0; g < groups; ++g) {
      leaves.push_back(
          topology.add_device({fmt::format("leaf.r{}.{}", r, g), DeviceKind::ib_switch, -1, -1}));
    }
  }
  for (std::size_t n = 0; n < nodes; ++n) {
    for (std::size_t r = 0; r < rails; ++r) {
      topology.connect(nics_per_node[n][r], leaves[r * groups + n / per_leaf],
                       spec.port_bandwidth_bytes_per_s, half_switch_ps, spec.cls);
    }
  }
  const double uplink = spec.leaf_spine_bandwidth_bytes_per_s();
  const int spines = spec.spine_count();
  for (int s = 0; s < spines; ++s) {
    const VertexId spine =
        topology.add_device({fmt::format("spine.{}", s), DeviceKind::ib_switch, -1, -1});
    topology.mark_spine(spine);
    for (VertexId leaf : leaves) {
      topology.connect(leaf, spine, uplink, spec.switch_latency_ps, spec.cls);
    }
  }
}

}  // namespace tilesim
