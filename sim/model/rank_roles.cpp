#include "sim/model/rank_roles.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "sim/core/interrupt.hpp"
#include "sim/model/collective_lanes.hpp"

namespace tilesim {
namespace {

// (Named apart from rank_shift_symmetry.cpp's `at`: unity builds join the two files.)
std::size_t role_slot(int i) { return static_cast<std::size_t>(i); }

// latency + bytes over the route's narrowest link, in whole picoseconds.
Picoseconds transfer_time_ps(const Topology& topology, const Route& route, double bytes) {
  double narrowest = std::numeric_limits<double>::infinity();
  for (LinkId l : route.links) {
    narrowest = std::min(narrowest, topology.link(l).bandwidth_bytes_per_s);
  }
  const double transfer_ps = std::isfinite(narrowest) ? bytes / narrowest * 1e12 : 0.0;
  return route.latency_ps + static_cast<Picoseconds>(std::llround(transfer_ps));
}

// Whether the blocks of c consecutive ranks are whole nodes that the shift by c maps onto each
// other: every node's ranks lie in one block, rank r sits at the same GPU place of its node as
// rank r mod c of the first block, and the ranks of one node go to one node, no two nodes of a
// block to the same. Node-major placement with c a multiple of the node's GPUs; also the
// transposed placement, rank t a + u on GPU u b + t, with c a multiple of n a on n-GPU nodes (a
// node's ranks r, r + a, ...; b a multiple of n): a mesh whose ranks are numbered across its
// groups of consecutive GPUs (mesh_placement.hpp: 32 x 512 kv-group-major by position, 256 x 16
// node-major by column).
bool blocks_are_whole_nodes(const Topology& topology, const std::vector<int>& placement, int c) {
  const int ranks = static_cast<int>(placement.size());
  const int per_node = std::max(1, topology.gpus_per_node);
  std::vector<int> block_of_node(role_slot(topology.node_count), -1);
  std::vector<int> image_of_node(role_slot(topology.node_count), -1);
  for (int r = 0; r < ranks; ++r) {
    const int gpu = placement[role_slot(r)], image = placement[role_slot(r % c)];
    const int node = topology.node_of_gpu(gpu), image_node = topology.node_of_gpu(image);
    if (node < 0 || image_node < 0 || gpu % per_node != image % per_node) return false;
    if (role_slot(node) >= block_of_node.size()) {
      block_of_node.resize(role_slot(node) + 1, -1);
      image_of_node.resize(role_slot(node) + 1, -1);
    }
    int& block = block_of_node[role_slot(node)];
    int& to = image_of_node[role_slot(node)];
    if ((block >= 0 && block != r / c) || (to >= 0 && to != image_node)) return false;
    block = r / c;
    to = image_node;
  }
  // One node of each block onto each node of the first: no two share an image.
  std::vector<std::pair<int, int>> images;
  for (std::size_t node = 0; node < block_of_node.size(); ++node) {
    if (block_of_node[node] >= 0) images.emplace_back(block_of_node[node], image_of_node[node]);
  }
  std::sort(images.begin(), images.end());
  return std::adjacent_find(images.begin(), images.end()) == images.end();
}

// The node link l belongs to: the one both its ends lie in, or the one it joins to a fabric
// switch (a NIC's up- or downlink); -1 for a link between switches or between two nodes.
int node_of_link(const Topology& topology, LinkId l) {
  const int from = topology.device(topology.link_source(l)).node;
  const int to = topology.device(topology.link_target(l)).node;
  if (from >= 0 && to >= 0) return from == to ? from : -1;
  return std::max(from, to);
}

// The links of each node (node_of_link), each at its place in its node (its rank among the
// node's links by id); nodes copied from one template, and joined to the fabric alike, list
// theirs in one order.
class NodeLinks {
 public:
  explicit NodeLinks(const Topology& topology)
      : topology_(topology),
        link_place_(role_slot(topology.link_count()), -1),
        device_place_(role_slot(topology.device_count()), -1) {
    std::vector<int> devices_in(role_slot(topology.node_count), 0);
    for (int v = 0; v < topology.device_count(); ++v) {
      const int node = topology.device(static_cast<VertexId>(v)).node;
      if (node < 0) continue;
      if (role_slot(node) >= devices_in.size()) devices_in.resize(role_slot(node) + 1, 0);
      device_place_[role_slot(v)] = devices_in[role_slot(node)]++;
    }
    links_of_.resize(devices_in.size());
    for (LinkId l = 0; l < topology.link_count(); ++l) {
      const int node = node_of_link(topology, l);
      if (node < 0) continue;
      link_place_[role_slot(l)] = static_cast<int>(links_of_[role_slot(node)].size());
      links_of_[role_slot(node)].push_back(l);
    }
  }

  // The link at l's place in `node`, -1 where that node has none like it (the same ends by
  // their places, bandwidth, latency and class): the node is no copy of l's.
  LinkId counterpart(LinkId l, int node) const {
    const std::vector<LinkId>& there = links_of_[role_slot(node)];
    const int place = link_place_[role_slot(l)];
    if (place < 0 || role_slot(place) >= there.size()) return -1;
    const LinkId c = there[role_slot(place)];
    const Link &a = topology_.link(l), &b = topology_.link(c);
    const bool same = a.bandwidth_bytes_per_s == b.bandwidth_bytes_per_s &&
                      a.latency_ps == b.latency_ps && a.cls == b.cls &&
                      alike(topology_.link_source(l), topology_.link_source(c)) &&
                      alike(topology_.link_target(l), topology_.link_target(c));
    return same ? c : -1;
  }

 private:
  // The same place in their nodes, or both switches of one kind outside the nodes (place -1).
  bool alike(VertexId u, VertexId v) const {
    return device_place_[role_slot(static_cast<int>(u))] ==
               device_place_[role_slot(static_cast<int>(v))] &&
           topology_.device(u).kind == topology_.device(v).kind;
  }

  const Topology& topology_;
  std::vector<int> link_place_;
  std::vector<int> device_place_;
  std::vector<std::vector<LinkId>> links_of_;  // per node
};

struct TimedRoute {
  Route route;
  Picoseconds time_ps = 0;  // latency + its share of the step's bytes over its narrowest link
};

// A rank's step transfer to a peer as the flow model runs it: the router's route, or, for
// NCCL's ring collectives between nodes, one route per lane carrying bytes / lanes
// (collective_lanes.hpp). Empty where both ranks share a GPU.
class TransferRoutes {
 public:
  TransferRoutes(const Topology& topology, Router& router, const std::vector<int>& placement,
                 const std::vector<std::vector<int>>& lanes_by_gpu, double step_bytes)
      : topology_(topology),
        router_(router),
        placement_(placement),
        lanes_by_gpu_(lanes_by_gpu),
        step_bytes_(step_bytes) {}

  std::vector<TimedRoute> operator()(int rank, int peer) const {
    const int src = placement_[role_slot(rank)], dst = placement_[role_slot(peer)];
    std::vector<TimedRoute> routes;
    if (src == dst) return routes;
    if (!lanes_by_gpu_.empty() && topology_.node_of_gpu(src) != topology_.node_of_gpu(dst)) {
      const std::vector<int>& from = lanes_by_gpu_[role_slot(src)];
      const std::vector<int>& to = lanes_by_gpu_[role_slot(dst)];
      const std::size_t lanes = std::min(from.size(), to.size());
      for (std::size_t i = 0; i < lanes; ++i) {
        Route route = collective_lane_route(router_, src, from[i], to[i], dst);
        const Picoseconds t =
            transfer_time_ps(topology_, route, step_bytes_ / static_cast<double>(lanes));
        routes.push_back({std::move(route), t});
      }
      if (!routes.empty()) return routes;
    }
    Route route = router_.route(src, dst);
    const Picoseconds t = transfer_time_ps(topology_, route, step_bytes_);
    routes.push_back({std::move(route), t});
    return routes;
  }

 private:
  const Topology& topology_;
  Router& router_;
  const std::vector<int>& placement_;
  const std::vector<std::vector<int>>& lanes_by_gpu_;
  double step_bytes_;
};

}  // namespace

std::optional<RankShiftSymmetry> find_rank_roles(const Topology& topology, ShiftSearch search,
                                                 double step_bytes, std::string& why_not) {
  const int p = static_cast<int>(search.peers.size());
  std::vector<int>& placement = search.placement;
  if (placement.empty()) {
    placement.resize(role_slot(p));
    std::iota(placement.begin(), placement.end(), 0);
  }
  for (int gpu : placement) {
    if (gpu < 0 || gpu >= topology.gpu_count()) {
      why_not = fmt::format("{} ranks on {} GPUs", p, topology.gpu_count());
      return std::nullopt;
    }
  }
  int k = 0;
  for (int c = 1; c < p && k == 0; ++c) {
    if (p % c != 0 || (search.shift_allowed && !search.shift_allowed(c))) continue;
    if (peers_equivariant(search.peers, c, search.peers_by_offset) &&
        blocks_are_whole_nodes(topology, placement, c)) {
      k = c;
    }
  }
  if (k == 0) {
    why_not = fmt::format(
        "no block of consecutive ranks short of all {} that is whole nodes (each node's ranks "
        "in one block, at the same places as the first block's), that the programs shift by and "
        "onto which no two peers of a rank fold",
        p);
    return std::nullopt;
  }
  std::vector<int> rank_of_gpu(role_slot(topology.gpu_count()), -1);
  for (int r = 0; r < p; ++r) rank_of_gpu[role_slot(placement[role_slot(r)])] = r;
  // Every rank's transfer routes and their times. A link between switches (or nodes) must be
  // owned by one block; a node's link stands for its place in the node (below).
  Router router(topology);
  const TransferRoutes routes_of(topology, router, placement, search.collective_lanes_by_gpu,
                                 step_bytes);
  const NodeLinks node_links(topology);
  std::vector<int> rank_on_node(role_slot(topology.node_count), -1);
  for (int r = 0; r < p; ++r) {
    const int node = topology.node_of_gpu(placement[role_slot(r)]);
    if (role_slot(node) >= rank_on_node.size()) rank_on_node.resize(role_slot(node) + 1, -1);
    rank_on_node[role_slot(node)] = r;
  }
  std::vector<int> owner(role_slot(topology.link_count()), -1);
  std::vector<std::vector<Picoseconds>> step_ps(role_slot(p));
  for (int r = 0; r < p; ++r) {
    throw_if_interrupted();
    for (int d : search.peers[role_slot(r)]) {
      if (d == r) continue;
      const std::vector<TimedRoute> routes = routes_of(r, d);
      if (routes.empty()) {
        why_not = fmt::format("ranks {} and {} share GPU {}", r, d, placement[role_slot(r)]);
        return std::nullopt;
      }
      Picoseconds step = 0;  // the transfer ends with its last lane
      for (const TimedRoute& lane : routes) {
        for (LinkId l : lane.route.links) {
          // A GPU the route relays through must run a rank: the quotient counts traffic on
          // GPUs by their ranks' roles (gpu_canonical).
          const Device& via = topology.device(topology.link_target(l));
          if (via.kind == DeviceKind::gpu && rank_of_gpu[role_slot(via.gpu_index)] < 0) {
            why_not = fmt::format("ranks {} -> {} relay through GPU {}, which runs no rank", r, d,
                                  via.gpu_index);
            return std::nullopt;
          }
          if (const int node = node_of_link(topology, l); node >= 0) {
            if (role_slot(node) >= rank_on_node.size() || rank_on_node[role_slot(node)] < 0) {
              why_not = fmt::format("ranks {} -> {} cross node {}, which runs no rank", r, d, node);
              return std::nullopt;
            }
            continue;
          }
          int& o = owner[role_slot(l)];
          if (o >= 0 && o != r / k) {
            why_not = fmt::format(
                "link {} carries transfers of ranks {}..{} and of ranks {}..{}: the quotient "
                "would miss their contention",
                l, o * k, o * k + k - 1, r / k * k, r / k * k + k - 1);
            return std::nullopt;
          }
          o = r / k;
        }
        step = std::max(step, lane.time_ps);
      }
      step_ps[role_slot(r)].push_back(step);
    }
  }
  // The block holding the slowest transfer (the first such block on a tie), and the largest
  // spread of one role's transfer times (peer i of ranks r = r' mod K).
  int slowest_rank = 0;
  Picoseconds slowest_ps = -1;
  Picoseconds spread_ps = 0;
  for (int s = 0; s < k; ++s) {
    for (std::size_t i = 0; i < step_ps[role_slot(s)].size(); ++i) {
      Picoseconds lo = step_ps[role_slot(s)][i], hi = lo;
      for (int r = s; r < p; r += k) {
        const Picoseconds t = step_ps[role_slot(r)][i];
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
      spread_ps = std::max(spread_ps, hi - lo);
    }
  }
  for (int r = 0; r < p; ++r) {
    for (Picoseconds t : step_ps[role_slot(r)]) {
      if (t > slowest_ps || (t == slowest_ps && r < slowest_rank)) {
        slowest_ps = t;
        slowest_rank = r;
      }
    }
  }
  const int first = slowest_rank / k * k;
  RankShiftSymmetry sym;
  sym.full_ranks = p;
  sym.classes = k;
  sym.full_placement.resize(role_slot(p));
  for (int i = 0; i < p; ++i)
    sym.full_placement[role_slot(i)] = placement[role_slot((first + i) % p)];
  const int copies = p / k;
  sym.link_canonical.assign(role_slot(topology.link_count()), -1);
  sym.link_orbit_size.assign(role_slot(topology.link_count()), 0);
  for (std::size_t l = 0; l < owner.size(); ++l) {
    if (owner[l] != first / k) continue;
    sym.link_canonical[l] = static_cast<int>(l);
    sym.link_orbit_size[l] = copies;
  }
  // A node's link (inside it, or joining it to a switch) stands for the links at its place in
  // the nodes at its node's place in every block: the simulated block's is their
  // representative. In the full run those carry the same transfers of the other blocks' ranks
  // (the ring's last hop into the next block's first GPU; the lanes of NCCL's ring steps,
  // which relay through the next node's GPUs while that node's own steps load the same links;
  // a mesh's KV hop into the next block's node, whose NIC downlinks its own Q ring loads too).
  for (int r = first; r < first + k; ++r) {
    for (int d : search.peers[role_slot(r)]) {
      if (d == r) continue;
      for (const TimedRoute& lane : routes_of(r, d)) {
        for (LinkId l : lane.route.links) {
          const int node = node_of_link(topology, l);
          if (node < 0) continue;
          // The node the shift maps it onto in the simulated block (blocks_are_whole_nodes;
          // every node a route crosses runs a rank, checked above).
          const int on_node = rank_on_node[role_slot(node)];
          const int simulated = topology.node_of_gpu(placement[role_slot(first + on_node % k)]);
          const LinkId c = node == simulated ? l : node_links.counterpart(l, simulated);
          if (c < 0) {
            why_not = fmt::format("nodes {} and {} are not copies of one node (link {})", node,
                                  simulated, l);
            return std::nullopt;
          }
          sym.link_canonical[role_slot(l)] = c;
          sym.link_canonical[role_slot(c)] = c;
          sym.link_orbit_size[role_slot(l)] = copies;
          sym.link_orbit_size[role_slot(c)] = copies;
        }
      }
    }
  }
  sym.gpu_canonical.assign(role_slot(topology.gpu_count()), -1);
  for (int i = 0; i < p; ++i) {
    sym.gpu_canonical[role_slot(sym.full_placement[role_slot(i)])] =
        sym.full_placement[role_slot(i % k)];
  }
  // The rotated ranks' peers are the original ones (peers are equivariant under K | first).
  sym.full_peers.assign(role_slot(k), {});
  sym.peers_by_offset = search.peers_by_offset;
  for (int s = 0; s < k && !search.peers_by_offset; ++s) {
    for (int d : search.peers[role_slot(s)]) {
      if (d != s) sym.full_peers[role_slot(s)].emplace_back(d % k, d);
    }
  }
  sym.roles = RoleApproximation{first, slowest_ps, spread_ps};
  return sym;
}

}  // namespace tilesim
