// Rail-optimised fat tree generation (see rail_fabric.hpp for the model).
#include "sim/topology/rail_fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
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

int RailFabricSpec::pod_count(int nodes) const {
  if (pod_nodes <= 0) return 1;
  return std::max(1, (nodes + pod_nodes - 1) / pod_nodes);
}

int RailFabricSpec::pod_leaves(int rails) const {
  return rails * ((pod_nodes + nodes_per_leaf - 1) / nodes_per_leaf);
}

int RailFabricSpec::core_count_per_plane(int rails) const {
  if (cores_per_plane > 0) return cores_per_plane;
  return std::max(1, static_cast<int>(std::ceil(pod_leaves(rails) / core_oversubscription - 1e-9)));
}

double RailFabricSpec::spine_core_bandwidth_bytes_per_s(int rails) const {
  return pod_leaves(rails) * leaf_spine_bandwidth_bytes_per_s() / core_oversubscription /
         core_count_per_plane(rails);
}

std::string RailFabricSpec::port_shortfall(int rails) const {
  if (switch_ports <= 0) return {};
  const int leaf_ports = nodes_per_leaf + spine_count();
  if (leaf_ports > switch_ports) {
    return fmt::format("a leaf needs {} ports ({} nodes down, {} spines up), more than {}",
                       leaf_ports, nodes_per_leaf, spine_count(), switch_ports);
  }
  if (pod_nodes > 0) {
    const int spine_ports = pod_leaves(rails) + core_count_per_plane(rails);
    if (spine_ports > switch_ports) {
      return fmt::format(
          "a spine needs {} ports ({} leaves of its pod down, {} cores of its plane up), more "
          "than {}",
          spine_ports, pod_leaves(rails), core_count_per_plane(rails), switch_ports);
    }
  }
  return {};
}

int RailFabricSpec::max_nodes(int rails) const {
  if (switch_ports <= 0) return std::numeric_limits<int>::max();
  if (pod_nodes > 0) return switch_ports * pod_nodes;
  return std::max(1, switch_ports / std::max(1, rails)) * nodes_per_leaf;
}

RailFabricSpec parse_rail_fabric(const YamlMap& fabric) {
  fabric.allow_only({"port_bandwidth", "nodes_per_leaf", "switch_latency", "oversubscription",
                     "spines", "class", "pod_nodes", "core_oversubscription", "cores_per_plane",
                     "switch_ports"});
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
  if (fabric.has("pod_nodes")) {
    const std::int64_t pod = fabric.integer("pod_nodes");
    if (pod < 1 || pod > 100000 || pod % spec.nodes_per_leaf != 0) {
      fabric.fail("pod_nodes", fmt::format("expected a positive multiple of nodes_per_leaf ({})",
                                           spec.nodes_per_leaf));
    }
    spec.pod_nodes = static_cast<int>(pod);
  }
  if (fabric.has("core_oversubscription")) {
    spec.core_oversubscription = fabric.number("core_oversubscription");
    if (!(spec.core_oversubscription >= 1.0) || !std::isfinite(spec.core_oversubscription)) {
      fabric.fail("core_oversubscription", "expected a ratio >= 1 (1 = non-blocking)");
    }
  }
  if (fabric.has("cores_per_plane")) {
    const std::int64_t cores = fabric.integer("cores_per_plane");
    if (cores < 1 || cores > 100000) fabric.fail("cores_per_plane", "expected a positive integer");
    spec.cores_per_plane = static_cast<int>(cores);
  }
  if (fabric.has("switch_ports")) {
    const std::int64_t ports = fabric.integer("switch_ports");
    if (ports < 2 || ports > 100000) {
      fabric.fail("switch_ports", "expected a switch radix of at least 2 ports");
    }
    spec.switch_ports = static_cast<int>(ports);
  }
  if ((spec.core_oversubscription != 1.0 || spec.cores_per_plane > 0) && spec.pod_nodes == 0) {
    fabric.fail(spec.cores_per_plane > 0 ? "cores_per_plane" : "core_oversubscription",
                "a core tier needs pod_nodes (nodes per pod)");
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
  const int pods = spec.pod_count(static_cast<int>(nodes));
  const std::size_t groups_per_pod =
      pods == 1 ? groups : static_cast<std::size_t>(spec.pod_nodes) / per_leaf;
  // pod_spines[p][s]: spine s of pod p.
  std::vector<std::vector<VertexId>> pod_spines(static_cast<std::size_t>(pods));
  for (int p = 0; p < pods; ++p) {
    auto& members = pod_spines[static_cast<std::size_t>(p)];
    for (int s = 0; s < spines; ++s) {
      const std::string name =
          pods == 1 ? fmt::format("spine.{}", s) : fmt::format("spine.p{}.{}", p, s);
      const VertexId spine = topology.add_device({name, DeviceKind::ib_switch, -1, -1});
      members.push_back(spine);
      for (std::size_t r = 0; r < rails; ++r) {
        const std::size_t first = static_cast<std::size_t>(p) * groups_per_pod;
        for (std::size_t g = first; g < std::min(groups, first + groups_per_pod); ++g) {
          topology.connect(leaves[r * groups + g], spine, uplink, spec.switch_latency_ps, spec.cls);
        }
      }
    }
    topology.add_spread_group(members, 1);
  }
  if (pods == 1) return;
  const int cores = spec.core_count_per_plane(static_cast<int>(rails));
  const double core_link = spec.spine_core_bandwidth_bytes_per_s(static_cast<int>(rails));
  for (int s = 0; s < spines; ++s) {
    std::vector<VertexId> plane;
    for (int k = 0; k < cores; ++k) {
      const VertexId core =
          topology.add_device({fmt::format("core.{}.{}", s, k), DeviceKind::ib_switch, -1, -1});
      plane.push_back(core);
      for (int p = 0; p < pods; ++p) {
        topology.connect(pod_spines[static_cast<std::size_t>(p)][static_cast<std::size_t>(s)], core,
                         core_link, spec.switch_latency_ps, spec.cls);
      }
    }
    topology.add_spread_group(plane, spines, static_cast<int>(rails));
  }
}

}  // namespace tilesim
