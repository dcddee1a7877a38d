// The hardware graph: devices (GPUs, switches, NICs, CPUs) and directed links.
//
// Model: a Boost.Graph bidirectional adjacency list. Every physical cable or
// bus is two directed edges, one per direction, each with its own bandwidth
// (bytes/s per direction), latency and class. GPUs are numbered 0..G-1 in
// node-major order (GPU k of node n has index n * gpus_per_node + k). NVSwitch
// fabrics are one switch vertex per node (non-blocking, as in DGX/HGX), so a
// GPU-to-GPU NVLink route is gpu -> nvswitch -> gpu.
//
// Link properties live in a flat vector indexed by LinkId (and are mirrored on
// the Boost edges), so a Topology can be copied and moved freely.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/core/units.hpp"

namespace tilesim {

enum class DeviceKind { gpu, nvswitch, pcie_switch, cpu, nic, ib_switch };
enum class LinkClass { nvlink, pcie, upi, ib, ethernet };
inline constexpr int kLinkClassCount = 5;

std::string_view to_string(DeviceKind kind);
std::string_view to_string(LinkClass cls);

// The largest latency a link or switch may have: the router packs path latencies in 41 bits
// of picoseconds (2.2 s, Router::Key), and no real link comes within six orders of it.
inline constexpr double kMaxLinkLatencyS = 1.0;

struct Device {
  std::string name;  // unique, e.g. "n3.gpu5", "leaf.r2.0", "spine.7"
  DeviceKind kind = DeviceKind::gpu;
  int node = -1;       // node index, -1 for fabric switches
  int gpu_index = -1;  // global GPU index for kind == gpu, else -1
};

struct Link {
  double bandwidth_bytes_per_s = 0.0;  // per direction, the spec value
  Picoseconds latency_ps = 0;
  LinkClass cls = LinkClass::nvlink;
  int id = -1;  // dense index 0..link_count()-1
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

  std::string name;       // from the YAML `name`
  std::string gpu_model;  // e.g. "H100-SXM"; selects the default calibration
  int gpus_per_node = 0;
  int node_count = 0;  // number of nodes (copies of the node template)

  int gpu_count() const { return static_cast<int>(gpu_vertices_.size()); }
  VertexId gpu_vertex(int gpu) const { return gpu_vertices_.at(static_cast<std::size_t>(gpu)); }
  int node_of_gpu(int gpu) const;
  int link_count() const { return static_cast<int>(links_.size()); }
  const Link& link(LinkId id) const;
  VertexId link_source(LinkId id) const;
  VertexId link_target(LinkId id) const;
  const TopologyGraph& graph() const { return graph_; }
  const Device& device(VertexId v) const { return graph_[v]; }
  int device_count() const { return static_cast<int>(boost::num_vertices(graph_)); }
  // Vertex of the device with this exact name, if any (linear scan).
  std::optional<VertexId> find_device(std::string_view device_name) const;

  // Switches over which the Router spreads equal-cost routes by destination (d-mod-k):
  // the spines of a pod, or the core switches of one core plane. Members are in index
  // order; for a destination GPU of node n and index k in its node, the rotation over S
  // members is (n / t) mod S with `node_stride` t, or ((n / t) L + k mod L) mod S with
  // L = `lanes` > 0. The spines of a pod rotate with n (t = 1, L = 0); a plane's cores
  // with n / spines per pod and the rail (t = S_spines, L = rails): the destinations
  // behind one spine of a pod are its pod_nodes / S_spines nodes on every rail, and
  // without the rail a pod's traffic through that spine would share pod_nodes / S_spines
  // of the plane's cores (4 of 32 on the H100 cluster: an eighth of the core tier).
  // Throws std::invalid_argument for an empty group, a member that is not a switch or is
  // already in a group, a stride < 1 or lanes < 0.
  struct SpreadGroup {
    std::vector<VertexId> members;
    int node_stride = 1;
    int lanes = 0;
  };
  void add_spread_group(std::vector<VertexId> members, int node_stride = 1, int lanes = 0);
  const std::vector<SpreadGroup>& spread_groups() const { return spread_groups_; }

 private:
  TopologyGraph graph_;
  std::vector<VertexId> gpu_vertices_;
  std::vector<SpreadGroup> spread_groups_;
  std::vector<Link> links_;
  std::vector<std::pair<VertexId, VertexId>> link_ends_;  // (source, target) per LinkId
};

// Shortest routes between GPUs, computed on demand and cached.
//
// Cost of a path = sum of link latencies, then hop count. Among equal-cost
// paths the route is the one whose vertex sequence comes first at the first
// difference, in this vertex order: vertex id, except inside each spread group
// (Topology::spread_groups()): with the group's S members and its rotation for the
// destination GPU (SpreadGroup: from its node n and its index k in the node),
// member (rotation + j) mod S takes the j-th smallest member id. In a rail fat tree
// all spines of a pod tie, so a route that crosses the spine layer goes through
// spine n mod S (d-mod-k routing): the nodes behind one leaf are reached through
// distinct spines and all-to-all traffic spreads over every spine instead of
// hot-spotting spine 0; across pods the core of that spine's plane is
// ((n / S) R + k) mod K of its K cores (R rails), so the traffic into one spine of a
// pod spreads over all K cores. Every other tie
// (e.g. NVLink first vs. rail first inside a leaf group) goes to the smaller
// vertex id. A route depends only on (src, dst) and the topology, never on the
// order of queries.
//
// Algorithm: a bidirectional Dijkstra finds the cheapest cost D. A forward walk from
// the source then always takes the next vertex that comes first in the order above
// (then the smallest link id) among those still on a cheapest path, which is exactly
// the first-difference tie-break. Whether a vertex is on one (its cost to the
// destination equals what is left of D) is decided from the backward search's exact and
// lower-bound costs, with a memoised depth-first check where those do not decide it,
// which stays within the forward search's radius. Both searches stay near the two GPUs,
// so a query costs far less than a full Dijkstra; across pods, where 1024 cores tie,
// the walk reads the few of them it passes instead of settling them all. That choice of next link
// depends only on the vertex and the destination, so the routes to one destination form a tree: on
// the kTreeAfterSearches-th uncached query to one destination (an all-to-all asks P - 1), the
// router settles the whole graph from it once and keeps each vertex's next link (4 bytes a vertex,
// at most kMaxTreeBytes in all); later routes to it are walks of that tree. Routes never depend on
// which path answered. The topology must outlive the router and not change while it is in use.
class Router {
 public:
  explicit Router(const Topology& topology);
  // Throws std::runtime_error if dst is unreachable (the loader rejects
  // disconnected topologies, so this indicates a bug) and std::out_of_range
  // for a GPU index outside [0, gpu_count). src == dst gives an empty route.
  // The returned reference stays valid for the lifetime of the router.
  const Route& route(int src_gpu, int dst_gpu);
  // route()'s answer without keeping the route, for a caller that keeps what it needs of it
  // (the flow model's per-route facts: pass-Q's quotient on 4096 GPUs routes 4.2M pairs). It
  // counts towards and uses the destination trees as route() does. Same errors.
  Route find_route(int src_gpu, int dst_gpu);
  // The routes from each GPU of `src_gpus` to `dst_gpu`, in that order, each equal to what
  // route() returns, and not cached: one backward search of the whole graph (the stored tree
  // where there is one) instead of one search per pair. For all-to-all peer sets walked one
  // destination at a time: the symmetry search of pass-Q and all-gather KV, which held all
  // P (P - 1) routes (101-109 bytes a pair measured, 1.7-1.8 GB on 4096 GPUs) while it cached
  // them. Fewer than kTreeAfterSearches
  // sources are routed by route() (and cached there). Same errors as route().
  std::vector<Route> routes_to(int dst_gpu, const std::vector<int>& src_gpus);
  std::size_t cached_routes() const { return cache_.size(); }
  std::size_t destination_trees() const { return trees_.size(); }

  static constexpr std::uint32_t kTreeAfterSearches = 48;
  static constexpr std::size_t kMaxTreeBytes = std::size_t{256} << 20;

 private:
  // A cost (latency_ps, hops) packed as latency_ps << kHopBits | hops, so that
  // integer order is the lexicographic order. Costs from kInfinity (2^61 - 1) up
  // mean unreachable, so paths must stay below 2^20 hops and 2^41 ps (2.2 s).
  using Key = std::int64_t;
  static constexpr int kHopBits = 20;
  struct Search {  // one direction of the bidirectional search
    std::vector<Key> dist;
    std::vector<std::uint32_t> seen, settled;         // generation stamps
    std::vector<std::pair<Key, std::uint32_t>> heap;  // min-heap
  };

  void reset(Search& search, std::uint32_t origin);
  // Relaxes the links of v, just settled at cost `key`: out-links for the
  // forward search, in-links for the backward one. Returns the cheapest full
  // path cost through a vertex that `other` has reached, or kInfinity.
  Key expand(Search& self, bool forward, std::uint32_t v, Key key, const Search& other);
  Key shortest();     // bidirectional phase from the reset searches
  void settle_all();  // the backward search from its reset state to every reachable vertex
  void next_generation();
  // What the spread groups' rotation reads of a destination GPU (Topology::SpreadGroup).
  struct Destination {
    int node = 0;  // Device::node
    int lane = 0;  // the GPU's index in its node (its rail where GPU k has NIC k)
  };
  Destination destination_of(std::uint32_t dst) const;
  // Position of vertex v in the tie-break order for routes to the destination `to`.
  std::uint32_t order(std::uint32_t v, Destination to) const;
  // The link a route towards the destination `to` takes out of u: among u's
  // out-links on a cheapest path (by backward_'s settled costs) the one whose far end
  // comes first in order(), the smallest link id among parallel ones.
  std::uint32_t next_link(std::uint32_t u, Destination to) const;
  // Whether the cost from v to the destination is at most `budget` when v is reached at
  // cost cheapest_ - budget, from the searches the bidirectional phase left.
  bool within(std::uint32_t v, Key budget);
  std::uint32_t next_link_within(std::uint32_t u, Key remaining, Destination to);
  // The route from src at the cheapest cost, choosing as next_link() would.
  Route walk_within(std::uint32_t src, std::uint32_t dst, Key cheapest, Destination to);
  // next_link of every vertex towards dst (kNoLink for dst and unreachable vertices), from
  // one backward search of the whole graph.
  std::vector<std::uint32_t> build_tree(std::uint32_t dst);
  Route walk_tree(const std::vector<std::uint32_t>& tree, std::uint32_t src, std::uint32_t dst,
                  int src_gpu, int dst_gpu) const;
  // The destination's tree, built on its kTreeAfterSearches-th uncached query (after that
  // many minus one searches) if the budget allows; nullptr otherwise.
  const std::vector<std::uint32_t>* tree_to(int dst_gpu, std::uint32_t dst);

  const Topology* topology_;
  // Compressed adjacency: out-links of vertex v are
  // out_links_[out_begin_[v] .. out_begin_[v+1]) in ascending id (same for in_).
  std::vector<std::uint32_t> out_begin_, out_links_, in_begin_, in_links_;
  std::vector<std::uint32_t> link_source_, link_target_;
  std::vector<Key> link_key_;
  struct VertexGroup {        // a vertex's place in its spread group
    std::int32_t group = -1;  // index in spread_groups(), -1 for none
    std::int32_t index = 0;   // member index in the group
  };
  std::vector<VertexGroup> vertex_group_;              // per vertex
  std::vector<std::vector<std::uint32_t>> group_ids_;  // per group: member ids, ascending
  Search forward_, backward_;                          // scratch, reused (stamps avoid clearing)
  Key backward_top_ = 0;  // the backward heap's smallest key when the walk starts
  Key cheapest_ = 0;      // D of the route being walked
  // within()'s answer per vertex, valid where decided_ is generation_ (one per query: a
  // vertex is asked at the one cost from src that can hold).
  std::vector<std::uint32_t> decided_;
  std::vector<std::uint8_t> on_path_;
  std::uint32_t generation_ = 0;
  std::unordered_map<std::uint64_t, Route> cache_;             // key: src_gpu << 32 | dst_gpu
  std::vector<std::uint32_t> searches_to_;                     // per destination GPU
  std::unordered_map<int, std::vector<std::uint32_t>> trees_;  // by destination GPU
  std::size_t tree_bytes_ = 0;
};

}  // namespace tilesim
