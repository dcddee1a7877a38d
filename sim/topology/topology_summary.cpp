// Summary numbers, their text form, and the Graphviz export.
#include "sim/topology/topology_summary.hpp"

#include <fmt/format.h>

#include "sim/topology/bisection.hpp"

namespace tilesim {

TopologySummary summarize(const Topology& topology) {
  TopologySummary s;
  s.name = topology.name;
  s.gpu_model = topology.gpu_model;
  s.gpus = topology.gpu_count();
  s.nodes = topology.node_count;
  s.gpus_per_node = topology.gpus_per_node;
  s.devices = topology.device_count();
  s.cables = topology.link_count() / 2;
  for (VertexId v = 0; v < static_cast<VertexId>(s.devices); ++v) {
    ++s.devices_per_kind[std::string(to_string(topology.device(v).kind))];
  }
  double intra = 0.0;
  double network = 0.0;
  for (LinkId l = 0; l < topology.link_count(); ++l) {
    const Link& link = topology.link(l);
    if (l % 2 == 0) ++s.links_per_class[std::string(to_string(link.cls))];
    const Device& from = topology.device(topology.link_source(l));
    const Device& to = topology.device(topology.link_target(l));
    if (from.node != 0) continue;
    if (to.node != 0) {
      network += link.bandwidth_bytes_per_s;
    } else if (from.kind == DeviceKind::gpu && to.kind != DeviceKind::nic) {
      intra += link.bandwidth_bytes_per_s;
    }
  }
  int node0_gpus = 0;
  for (int gpu = 0; gpu < s.gpus; ++gpu) node0_gpus += topology.node_of_gpu(gpu) == 0 ? 1 : 0;
  if (node0_gpus > 0) {
    s.intra_node_injection_bytes_per_s_per_gpu = intra / node0_gpus;
    s.network_injection_bytes_per_s_per_gpu = network / node0_gpus;
  }
  s.bisection_bytes_per_s = bisection_bytes_per_s(topology);
  return s;
}

std::string format_summary(const TopologySummary& s) {
  std::string out;
  out += fmt::format("topology        {}\n", s.name);
  out += fmt::format("gpu model       {}\n", s.gpu_model);
  out += fmt::format("gpus            {} ({} nodes x {})\n", s.gpus, s.nodes, s.gpus_per_node);
  out += fmt::format("devices         {}", s.devices);
  for (const auto& [kind, count] : s.devices_per_kind) out += fmt::format("  {} {}", kind, count);
  out += fmt::format("\ncables          {}", s.cables);
  for (const auto& [cls, count] : s.links_per_class) out += fmt::format("  {} {}", cls, count);
  out += "\n";
  out += fmt::format("per-GPU injection, per direction: intra-node {}, network {}\n",
                     format_bandwidth(s.intra_node_injection_bytes_per_s_per_gpu),
                     format_bandwidth(s.network_injection_bytes_per_s_per_gpu));
  out += fmt::format("bisection       {} (max flow, GPUs [0, {}) -> [{}, {}), one direction)\n",
                     format_bandwidth(s.bisection_bytes_per_s), s.gpus / 2, s.gpus / 2, s.gpus);
  return out;
}

namespace {
std::string_view shape_of(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu:
      return "box";
    case DeviceKind::nic:
      return "ellipse";
    case DeviceKind::cpu:
      return "octagon";
    default:
      return "diamond";
  }
}
}  // namespace

std::string to_dot(const Topology& topology) {
  std::string out = fmt::format("graph \"{}\" {{\n", topology.name);
  int open_node = -2;
  for (VertexId v = 0; v < static_cast<VertexId>(topology.device_count()); ++v) {
    const Device& d = topology.device(v);
    if (d.node != open_node) {
      if (open_node >= 0) out += "  }\n";
      if (d.node >= 0) {
        out += fmt::format("  subgraph cluster_n{} {{\n    label=\"node {}\";\n", d.node, d.node);
      }
      open_node = d.node;
    }
    out += fmt::format("{}\"{}\" [shape={}];\n", d.node >= 0 ? "    " : "  ", d.name,
                       shape_of(d.kind));
  }
  if (open_node >= 0) out += "  }\n";
  for (LinkId l = 0; l < topology.link_count(); l += 2) {
    const Link& link = topology.link(l);
    out += fmt::format("  \"{}\" -- \"{}\" [label=\"{} {}\"];\n",
                       topology.device(topology.link_source(l)).name,
                       topology.device(topology.link_target(l)).name, to_string(link.cls),
                       format_bandwidth(link.bandwidth_bytes_per_s));
  }
  out += "}\n";
  return out;
}

}  // namespace tilesim
