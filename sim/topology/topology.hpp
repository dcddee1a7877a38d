// The hardware graph: devices (GPUs, switches, NICs, CPUs) and directed links.
//
// Model: a Boost.Graph bidirectional adjacency list. Every physical cable or
// bus is two directed edges, one per direction, each with its own bandwidth
// (bytes/s per direction), latency and class. GPUs are numbered 0..G-1 in
// node-major order (GPU k of node n has index n * gpus_per_node + k). NVSwitch
// fabrics are one switch vertex per node (non-blocking, as in DGX/HGX), so a
// GPU-to-GPU NVLink route is gpu -> nvswitch -> gpu.
#pragma once

#include <boost/graph/adjacency_list.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

enum class DeviceKind { gpu, nvswitch, pcie_switch, cpu, nic, ib_switch };
enum class LinkClass { nvlink, pcie, upi, ib, ethernet };
inline constexpr int kLinkClassCount = 5;

std::string_view to_string(DeviceKind kind);
std::string_view to_string(LinkClass cls);

struct Device {
  std::string name;      // unique, e.g. "n3.gpu5", "leaf.r2.0", "spine.7"
  DeviceKind kind = DeviceKind::gpu;
  int node = -1;         // node index, -1 for fabric switches
  int gpu_index = -1;    // global GPU index for kind == gpu, else -1
};

struct Link {
  double bandwidth_bytes_per_s = 0.0;  // per direction, the spec value
  Picoseconds latency_ps = 0;
  LinkClass cls = LinkClass::nvlink;
  int id = -1;                          // dense index 0..link_count()-1
};

using TopologyGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, Device, Link>;
using VertexId = TopologyGraph::vertex_descriptor;
using LinkId = int;

struct Route {
  std::vector<LinkId> links;   // in order from source to destination
  Picoseconds latency_ps = 0;  // sum of link latencies
};

class Topology {
 public:
  Topology() = default;

  // Builders (used by the YAML loader and by tests that build graphs by hand).
  VertexId add_device(Device device);
  // Adds the two directed links a<->b with the same properties; returns the id
  // of the a->b link (b->a is that id + 1).
  LinkId connect(VertexId a, VertexId b, double bandwidth_bytes_per_s, Picoseconds latency_ps,
                 LinkClass cls);

  std::string name;          // from the YAML `name`
  std::string gpu_model;     // e.g. "H100-SXM"; selects the default calibration
  int gpus_per_node = 0;

  int gpu_count() const { return static_cast<int>(gpu_vertices_.size()); }
  VertexId gpu_vertex(int gpu) const { return gpu_vertices_.at(static_cast<std::size_t>(gpu)); }
  int node_of_gpu(int gpu) const;
  int link_count() const { return static_cast<int>(links_.size()); }
  const Link& link(LinkId id) const;
  VertexId link_source(LinkId id) const;
  VertexId link_target(LinkId id) const;
  const TopologyGraph& graph() const { return graph_; }
  const Device& device(VertexId v) const { return graph_[v]; }

 private:
  TopologyGraph graph_;
  std::vector<VertexId> gpu_vertices_;
  std::vector<TopologyGraph::edge_descriptor> links_;
};

// Shortest routes between GPUs, computed on demand and cached.
// Cost of a path = sum of link latencies, then hop count, then the smaller
// vertex id at the first difference: deterministic for equal-cost paths.
class Router {
 public:
  explicit Router(const Topology& topology);
  // Throws std::runtime_error if dst is unreachable (the loader rejects
  // disconnected topologies, so this indicates a bug).
  const Route& route(int src_gpu, int dst_gpu);

 private:
  const Topology* topology_;
  struct Cache;
  std::vector<std::vector<std::pair<int, Route>>> cache_;  // per src gpu, small
};

}  // namespace tilesim
