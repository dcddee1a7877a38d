// YAML topology loader: parse, instantiate the node template per node, add the
// fabric, then check that every GPU can reach every other GPU.
#include "sim/topology/topology_loader.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "sim/core/input_error.hpp"
#include "sim/core/yaml_reader.hpp"
#include "sim/topology/node_template.hpp"
#include "sim/topology/rail_fabric.hpp"

namespace tilesim {
namespace {

constexpr std::int64_t kMaxNodes = 1 << 16;

// The top-level keys of a topology file (also of the file named by node_from:).
void allow_topology_keys(const YamlMap& root) {
  root.allow_only({"name", "gpu", "nodes", "node", "node_from", "fabric"});
}

int parse_nodes(const YamlMap& root, int gpus_per_node, int gpus_wanted) {
  if (!root.has("nodes")) return 1;
  const YAML::Node n = root.node("nodes");
  if (n.IsScalar() && n.Scalar() == "auto") {
    if (gpus_wanted <= 0) return 1;
    return (gpus_wanted + gpus_per_node - 1) / gpus_per_node;
  }
  const auto nodes = n.IsScalar() ? parse_tokens(n.Scalar()) : std::nullopt;
  if (!nodes || *nodes < 1 || *nodes > kMaxNodes) {
    root.fail("nodes", "expected a positive node count or auto");
  }
  return static_cast<int>(*nodes);
}

// Breadth-first search from GPU 0; names an unreachable GPU pair with the key
// most likely at fault.
void check_connected(const Topology& topo, const YamlMap& root, bool has_fabric) {
  const auto& g = topo.graph();
  std::vector<char> seen(static_cast<std::size_t>(topo.device_count()), 0);
  std::vector<VertexId> queue{topo.gpu_vertex(0)};
  seen[queue.front()] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    for (auto [e, end] = boost::out_edges(queue[head], g); e != end; ++e) {
      const VertexId v = boost::target(*e, g);
      if (!seen[v]) {
        seen[v] = 1;
        queue.push_back(v);
      }
    }
  }
  for (int gpu = 1; gpu < topo.gpu_count(); ++gpu) {
    if (seen[topo.gpu_vertex(gpu)]) continue;
    const std::string what =
        fmt::format("topology is disconnected: GPU {} cannot reach GPU {}",
                    topo.device(topo.gpu_vertex(0)).name, topo.device(topo.gpu_vertex(gpu)).name);
    if (topo.node_of_gpu(gpu) == topo.node_of_gpu(0)) {
      if (!root.has("node")) root.fail("node_from", what);
      const YamlMap node = root.map("node");
      throw InputError(root.file(), node.line_of_key("links"), node.key_path("links"), what);
    }
    if (!has_fabric) root.fail("nodes", what + "; several nodes need a fabric:");
    root.fail("fabric", what);
  }
}

// The node template comes from `node:` here or from the `node:` of the file
// named by `node_from:` (relative to this file); exactly one must be given.
NodeTemplate read_node_template(const YamlMap& root) {
  if (root.has("node") == root.has("node_from")) {
    root.fail(root.has("node") ? "node_from" : "node",
              "expected exactly one of node: (a node template) or node_from: (a file)");
  }
  if (root.has("node")) return parse_node_template(root.map("node"));
  const std::filesystem::path here(root.file());
  const std::string other = (here.parent_path() / root.string("node_from")).string();
  if (!std::filesystem::exists(other)) {
    root.fail("node_from",
              fmt::format("expected an existing topology file, '{}' not found", other));
  }
  const YamlMap other_root(load_yaml_file(other), other, "");
  allow_topology_keys(other_root);
  return parse_node_template(other_root.map("node"));
}

}  // namespace

Topology load_topology(const std::string& path, int gpus_wanted) {
  const YamlMap root(load_yaml_file(path), path, "");
  allow_topology_keys(root);
  Topology topo;
  topo.name = root.string("name");
  topo.gpu_model = root.string("gpu");
  const NodeTemplate tmpl = read_node_template(root);
  std::optional<RailFabricSpec> fabric;
  const auto fabric_map = root.optional_map("fabric");
  if (fabric_map) {
    fabric = parse_rail_fabric(*fabric_map);
    if (tmpl.nics == 0) {
      root.fail("fabric", "the node template has no device of kind nic to attach");
    }
    if (const std::string why = fabric->port_shortfall(tmpl.nics); !why.empty()) {
      fabric_map->fail("switch_ports", why);
    }
  }
  const int nodes = parse_nodes(root, tmpl.gpus, gpus_wanted);
  if (const int most = fabric ? fabric->max_nodes(tmpl.nics) : nodes; fabric && nodes > most) {
    root.fail("nodes",
              fmt::format("at most {} nodes ({} GPUs) on this fabric of {}-port switches ({}), "
                          "got {} nodes ({} GPUs)",
                          most, static_cast<std::int64_t>(most) * tmpl.gpus, fabric->switch_ports,
                          fabric->pod_nodes > 0
                              ? fmt::format("a core switch has one port per pod of {} nodes",
                                            fabric->pod_nodes)
                              : "one pod: a spine has one port per leaf",
                          nodes, static_cast<std::int64_t>(nodes) * tmpl.gpus));
  }
  topo.gpus_per_node = tmpl.gpus;
  topo.node_count = nodes;

  std::vector<std::vector<VertexId>> nics(static_cast<std::size_t>(nodes));
  std::vector<VertexId> local(tmpl.devices.size());
  for (int n = 0; n < nodes; ++n) {
    for (std::size_t d = 0; d < tmpl.devices.size(); ++d) {
      const auto& td = tmpl.devices[d];
      local[d] = topo.add_device({fmt::format("n{}.{}", n, td.name), td.kind, n, -1});
      if (td.kind == DeviceKind::nic) nics[static_cast<std::size_t>(n)].push_back(local[d]);
    }
    for (const auto& l : tmpl.links) {
      topo.connect(local[static_cast<std::size_t>(l.a)], local[static_cast<std::size_t>(l.b)],
                   l.bandwidth_bytes_per_s, l.latency_ps, l.cls);
    }
  }
  if (fabric) add_rail_fabric(topo, *fabric, nics);
  check_connected(topo, root, fabric.has_value());
  return topo;
}

}  // namespace tilesim
