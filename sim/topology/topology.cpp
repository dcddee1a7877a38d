// Topology builders and accessors: devices are Boost vertices, every cable is
// two directed Boost edges whose properties are mirrored in a flat link table.
#include "sim/topology/topology.hpp"

#include <algorithm>
#include <stdexcept>

namespace tilesim {

std::string_view to_string(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::gpu:
      return "gpu";
    case DeviceKind::nvswitch:
      return "nvswitch";
    case DeviceKind::pcie_switch:
      return "pcie_switch";
    case DeviceKind::cpu:
      return "cpu";
    case DeviceKind::nic:
      return "nic";
    case DeviceKind::ib_switch:
      return "ib_switch";
  }
  return "unknown";
}

std::string_view to_string(LinkClass cls) {
  switch (cls) {
    case LinkClass::nvlink:
      return "nvlink";
    case LinkClass::pcie:
      return "pcie";
    case LinkClass::upi:
      return "upi";
    case LinkClass::ib:
      return "ib";
    case LinkClass::ethernet:
      return "ethernet";
  }
  return "unknown";
}

VertexId Topology::add_device(Device device) {
  const bool is_gpu = device.kind == DeviceKind::gpu;
  if (is_gpu) device.gpu_index = gpu_count();
  const VertexId v = boost::add_vertex(std::move(device), graph_);
  if (is_gpu) gpu_vertices_.push_back(v);
  return v;
}

LinkId Topology::connect(VertexId a, VertexId b, double bandwidth_bytes_per_s,
                         Picoseconds latency_ps, LinkClass cls) {
  const auto n = boost::num_vertices(graph_);
  if (a >= n || b >= n || a == b) {
    throw std::invalid_argument("Topology::connect: bad endpoints");
  }
  if (!(bandwidth_bytes_per_s > 0.0) || latency_ps < 0) {
    throw std::invalid_argument("Topology::connect: bandwidth must be > 0, latency >= 0");
  }
  const LinkId id = link_count();
  Link forward{bandwidth_bytes_per_s, latency_ps, cls, id};
  Link backward{bandwidth_bytes_per_s, latency_ps, cls, id + 1};
  boost::add_edge(a, b, forward, graph_);
  boost::add_edge(b, a, backward, graph_);
  links_.push_back(forward);
  links_.push_back(backward);
  link_ends_.emplace_back(a, b);
  link_ends_.emplace_back(b, a);
  return id;
}

int Topology::node_of_gpu(int gpu) const { return device(gpu_vertex(gpu)).node; }

const Link& Topology::link(LinkId id) const { return links_.at(static_cast<std::size_t>(id)); }

VertexId Topology::link_source(LinkId id) const {
  return link_ends_.at(static_cast<std::size_t>(id)).first;
}

VertexId Topology::link_target(LinkId id) const {
  return link_ends_.at(static_cast<std::size_t>(id)).second;
}

void Topology::add_spread_group(std::vector<VertexId> members, int node_stride, int lanes) {
  const auto is_switch = [](DeviceKind kind) {
    return kind == DeviceKind::ib_switch || kind == DeviceKind::nvswitch ||
           kind == DeviceKind::pcie_switch;
  };
  if (members.empty() || node_stride < 1 || lanes < 0) {
    throw std::invalid_argument("Topology::add_spread_group: empty group, stride < 1 or lanes < 0");
  }
  for (std::size_t i = 0; i < members.size(); ++i) {
    const VertexId v = members[i];
    bool taken = std::find(members.begin(), members.begin() + static_cast<std::ptrdiff_t>(i), v) !=
                 members.begin() + static_cast<std::ptrdiff_t>(i);
    for (const SpreadGroup& g : spread_groups_) {
      taken = taken || std::find(g.members.begin(), g.members.end(), v) != g.members.end();
    }
    if (v >= boost::num_vertices(graph_) || !is_switch(graph_[v].kind) || taken) {
      throw std::invalid_argument(
          "Topology::add_spread_group: not a switch, or already in a spread group");
    }
  }
  spread_groups_.push_back(SpreadGroup{std::move(members), node_stride, lanes});
}

std::optional<VertexId> Topology::find_device(std::string_view device_name) const {
  for (VertexId v = 0; v < boost::num_vertices(graph_); ++v) {
    if (graph_[v].name == device_name) return v;
  }
  return std::nullopt;
}

}  // namespace tilesim
